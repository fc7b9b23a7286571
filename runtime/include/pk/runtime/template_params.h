// How to launch a kernel that instantiates a template (the GEMMs): its parameter block, grid,
// shared memory and preparation, written by pkc above the kernel so that a host with no
// template-specific code (the JIT, pk_torch, the typed launchers) can launch it:
//   // pk-template <kernel> threads=<n> smem=<bytes> grid=<expr> params=<bytes> [zero=<arg>,...]
//   // pk-param <kernel> <offset> <member> <kind> [arg=<a>] [<expr>] [dims=<e>,<e>[,<e>]] [box=<c>x<r>[x<l>]]
//        [noswizzle]
// <kind> is one of
//   tmap   a TMA descriptor of argument <a> (its local data), dims innermost first, bf16, boxes
//          128-byte swizzled (unswizzled with `noswizzle`)
//   tmaps  PK_MAX_RANKS descriptors: argument <a> (symmetric) on every rank, zeros past world
//   ctx    the launch context (pk::LaunchContext)
//   i32    an int: <expr>
//   f32    a float: scalar argument <a> (a float kernel argument, for an epilogue)
//   ptr    argument <a>'s local data pointer
//   ptrs   PK_MAX_RANKS pointers: symmetric argument <a> on every rank, null past world
//   ticket the kernel's tile counter for this launch (pk::TileTicket, Context::tile_ticket)
//   workspace  a pointer to <expr> bytes of device memory the context keeps for the kernel and
//          stream (Context::workspace: zeroed when made, left as the last launch left it; null
//          for 0 bytes)
// Expressions are those of pk-host-check lines (pk/runtime/host_check.h), with `rank` and `sms`.
// `zero` arguments have their local data zeroed on the launch stream first (outputs that the
// kernel accumulates into). pkc also writes static_asserts of every offset and of the block's
// size into the kernel's CUDA, so a layout that drifted from the template fails to compile.
// Plain C++: the compiler links it too.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <pk/runtime/host_check.h>

namespace pk {

struct ParamField {
  enum class Kind { tmap, tmaps, ctx, i32, i64, f32, ptr, ptrs, ticket, workspace };
  Kind kind = Kind::i32;
  std::size_t offset = 0;
  std::string member;  // the Params member it fills (for diagnostics and the static_asserts)
  int arg = -1;        // tmap, tmaps, f32, ptr (none: a null pointer), ptrs
  HostExpr value;      // i32, i64; workspace: its bytes
  std::vector<HostExpr> dims;  // tmap, tmaps: extents, innermost first (2 or 3)
  std::vector<int> box;        // tmap, tmaps: box extents, innermost first
  bool swizzle = true;         // tmap, tmaps: 128-byte swizzle (false: rows as they are)
};

struct TemplateLaunch {
  std::string kernel;
  int threads = 0;
  unsigned shared_bytes = 0;
  HostExpr grid;
  std::size_t params_bytes = 0;
  std::vector<int> zero_args;
  std::vector<ParamField> fields;
  // A kernel of the same arguments on the general tile path (`fallback=<kernel>`), launched
  // instead when the sizes or addresses break the template's rules (TMA's 16-byte pitches and
  // bases); empty when the template's rules are errors.
  std::string fallback;
};

// Size and alignment of a field of `kind` (tmaps and ptrs: the whole array).
std::size_t param_field_bytes(ParamField::Kind kind);
std::size_t param_field_align(ParamField::Kind kind);
// Places `fields` in order as a C++ struct would (each at the next multiple of its alignment);
// returns the struct's size.
std::size_t lay_out_params(std::vector<ParamField>& fields);

const char* param_kind_name(ParamField::Kind kind);
// The `// pk-template` line and the `// pk-param` lines of `t`, each ending in '\n'.
std::string print_template_launch(const TemplateLaunch& t);
// The description of `kernel` in pkc's CUDA; an error if the lines are malformed or the
// fields overlap, and `none` (ok, kernel empty) when the kernel has no pk-template line.
Result<TemplateLaunch> template_launch_of(const std::string& cuda, const std::string& kernel);

}  // namespace pk
