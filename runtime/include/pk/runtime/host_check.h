// The kernel's launch-time argument checks (pk.check) as the host can evaluate them. pkc writes
// one line per check whose values depend only on argument sizes, scalar arguments and the
// world size, above the kernel in its CUDA:
//   // pk-host-check <kernel> <id> if=<expr> expected=<expr> actual=<expr> <message>
// <expr> is a constant, `world`, `rank`, `sms` (the SMs this rank may use: all of them, or 1/W
// while W ranks share the GPU), `dim(<arg>,<k>)` (extent k of tensor argument <arg>),
// `arg(<arg>)` (an integer scalar argument) or `<op>(<expr>,<expr>)` with op one of add sub mul
// div rem min max (signed, as C++), cdiv (division rounded up), balanced (persistent blocks for
// `a` tiles on at most `b` SMs: the fewest that take as many waves) and eq ne slt sle sgt sge
// ult ule ugt uge (1 or 0). Template kernels' parameter lines (pk/runtime/template_params.h)
// use the same expressions. The typed
// launchers (pkc --emit=launcher-impl) and the JIT both read these lines, so the host refuses
// exactly what the kernel's own check would refuse, at the call; the kernel keeps its check.
// Plain C++: the compiler links it too.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <pk/runtime/status.h>

namespace pk {

struct HostExpr {
  enum class Kind { constant, world, rank, sms, dim, arg, add, sub, mul, div, rem, min, max,
                    cdiv, balanced, eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge };
  Kind kind = Kind::constant;
  long long value = 0;  // constant: the value; dim and arg: the argument index
  int dim = 0;          // dim: the extent
  std::vector<HostExpr> operands;  // the two operands of an operation

  static HostExpr constant(long long v);
  static HostExpr world();
  static HostExpr leaf(Kind kind);  // world, rank or sms
  static HostExpr extent(int arg, int k);
  static HostExpr scalar(int arg);
  static HostExpr op(Kind kind, HostExpr a, HostExpr b);
};

struct HostCheck {
  std::string kernel;
  int id = -1;  // the kernel's `// pk-check <id>` (the device check it mirrors)
  HostExpr condition, expected, actual;
  std::string message;
  // A rule only the template has (16-byte TMA rows; a reduce-scatter's tiles inside one owner),
  // written ` twin_rule` before the message: a kernel with a general-path twin launches the
  // twin when only such rules fail.
  bool twin_rule = false;
};

// The operation named `name` ("mul", "ult", ...); false when there is none.
bool host_op_kind(const std::string& name, HostExpr::Kind* kind);

std::string print_host_expr(const HostExpr& e);
Result<HostExpr> parse_host_expr(const std::string& text);

// `// pk-host-check` line text (without the newline) for `c`, and back.
std::string print_host_check(const HostCheck& c);
Result<HostCheck> parse_host_check(const std::string& line);

// Every `// pk-host-check` line of `kernel` in pkc's CUDA, in order.
Result<std::vector<HostCheck>> host_checks_of(const std::string& cuda, const std::string& kernel);

// What an expression reads. Each callback may refuse (a bad argument index, say).
struct HostValues {
  long long world = 1;
  long long rank = 0;
  long long sms = 0;  // read by template parameter lines only
  std::function<Result<long long>(int arg, int k)> extent;
  std::function<Result<long long>(int arg)> scalar;
};

// The value; division or remainder by zero is an error.
Result<long long> evaluate_host_expr(const HostExpr& e, const HostValues& v);

// Runs one check: ok, or "<message>: expected <e>, got <a>".
Status run_host_check(const HostCheck& c, const HostValues& v);

// The expression as C++ over a launcher's names: `world`, `rank`, `sms`, `<name(arg)>.shape[k]`,
// `static_cast<long long>(<name(arg)>)`; cdiv and balanced call pk::host_cdiv and
// pk::balanced_blocks.
std::string host_expr_cpp(const HostExpr& e, const std::function<std::string(int arg)>& name);

long long host_cdiv(long long a, long long b);
// Persistent blocks for `tiles` tiles on at most `sms` SMs: the fewest that finish in the same
// number of waves, so every block walks as many tiles and no last wave runs on a few SMs.
long long balanced_blocks(long long tiles, long long sms);

// Calls `f(arg, is_extent)` for every argument the expression reads.
void for_each_host_ref(const HostExpr& e, const std::function<void(int arg, bool is_extent)>& f);
// Calls f(dividend, divisor) for every div, rem and cdiv in `e`, inner ones first: a typed
// launcher refuses, as the JIT's evaluation does, before C++ would divide by zero.
void for_each_host_division(const HostExpr& e,
                            const std::function<void(const HostExpr& a, const HostExpr& b)>& f);
// Whether a / b is undefined in C++ (b == 0, or the one quotient that overflows).
bool host_division_fails(long long a, long long b);

}  // namespace pk
