// Building a template kernel's launch description (pk/runtime/template_params.h): the
// parameter block field by field and the host checks, from host expressions over the spec's
// arguments. Shared by the emission patterns of the GEMM and attention templates.
#pragma once
#include "ElementProgram.h"
#include "Emitter.h"

#include <pk/runtime/host_check.h>
#include <pk/runtime/template_params.h>

namespace mlir::pk::cuda {

using Field = ::pk::ParamField;
using FK = ::pk::ParamField::Kind;

inline ::pk::HostExpr expr(const std::string &text) {
  auto e = ::pk::parse_host_expr(text);
  if (!e.is_ok()) llvm::report_fatal_error(("template launch description: " + e.status().message()).c_str());
  return *e;
}

inline std::string dim(int64_t arg, int k) {
  return "dim(" + std::to_string(arg) + "," + std::to_string(k) + ")";
}

// The spec's arguments for the job's roles, and the description and checks built from them.
struct TemplateDescriber {
  ::pk::TemplateLaunch t;
  std::vector<::pk::HostCheck> checks;

  void field(FK kind, const std::string &member, int64_t arg = -1, std::vector<std::string> dims = {},
             std::vector<int> box = {}) {
    Field f;
    f.kind = kind;
    f.member = member;
    f.arg = int(arg);
    for (const std::string &d : dims) f.dims.push_back(expr(d));
    f.box = std::move(box);
    t.fields.push_back(std::move(f));
  }
  void i32(const std::string &member, const std::string &value) {
    field(FK::i32, member);
    t.fields.back().value = expr(value);
  }
  void i64(const std::string &member, const std::string &value) {
    field(FK::i64, member);
    t.fields.back().value = expr(value);
  }
  // The Args of an element-wise program (an epilogue, a score map), in their struct's order.
  void fields(const std::vector<EpilogueField> &args) {
    for (const EpilogueField &f : args) {
      if (f.kind == EpilogueField::Kind::ptr) field(FK::ptr, f.member, f.arg);
      else if (f.kind == EpilogueField::Kind::f32) field(FK::f32, f.member, f.arg);
      else if (f.kind == EpilogueField::Kind::i64) i64(f.member, f.value);
      else i32(f.member, f.value);
    }
  }
  // `lhs == rhs`, else "<message>: expected <lhs>, got <rhs>". `twinRule`: a rule only the template has, which a
  // kernel with a general-path twin answers by launching the twin.
  void check(const std::string &lhs, const std::string &rhs, const std::string &message,
             bool twinRule = false) {
    ::pk::HostCheck c;
    c.kernel = t.kernel;
    c.id = int(checks.size());
    c.condition = expr("eq(" + lhs + "," + rhs + ")");
    c.expected = expr(lhs);
    c.actual = expr(rhs);
    c.message = message;
    c.twin_rule = twinRule;
    checks.push_back(std::move(c));
  }
};

// The parameter block's size, and (under nvcc: NVRTC has no offsetof) each field's offset, as
// static_asserts against the template's real `params` type; ends the kernel's namespace.
inline void emitParamsAsserts(Emitter &e, StringRef params, const ::pk::TemplateLaunch &t, StringRef kernel) {
  e.os << "static_assert(sizeof(" << params << ") == " << t.params_bytes << ", \"parameter block size\");\n";
  e.os << "#ifndef __CUDACC_RTC__\n";
  for (const Field &f : t.fields)
    e.os << "static_assert(offsetof(" << params << ", " << f.member << ") == " << f.offset
         << ", \"offset of " << f.member << "\");\n";
  e.os << "#endif\n";
  e.os << "}  // namespace pk_" << kernel << "\n\n";
}

// The kernel's arguments as the spec declares them (`// pk-launch`), how to fill the template's
// parameters from them (`// pk-template`, `// pk-param`) and the host checks.
inline void emitLaunchLines(Emitter &e, KernelOp kernel, StringRef job, const ::pk::TemplateLaunch &t,
                            const std::vector<::pk::HostCheck> &checks) {
  e.os << "// pk-launch " << kernel.getSymName() << " template=" << job << " threads=" << t.threads << " args=";
  for (auto [i, arg] : llvm::enumerate(kernel.getBody().front().getArguments()))
    e.os << (i ? "," : "") << arg.getType();
  e.os << "\n" << ::pk::print_template_launch(t);
  for (const ::pk::HostCheck &c : checks) e.os << ::pk::print_host_check(c) << "\n";
}

} // namespace mlir::pk::cuda
