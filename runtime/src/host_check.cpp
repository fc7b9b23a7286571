// The `// pk-host-check` lines: print, parse, evaluate, and print as C++ (pk/runtime/host_check.h).
#include <pk/runtime/host_check.h>

#include <cctype>
#include <climits>
#include <cstdlib>

namespace pk {
namespace {

using Kind = HostExpr::Kind;

struct OpName {
  Kind kind;
  const char* name;
  const char* cpp;  // the C++ operator (null: a function); unsigned comparisons also cast
};
const OpName kOps[] = {
    {Kind::add, "add", "+"},  {Kind::sub, "sub", "-"},  {Kind::mul, "mul", "*"},
    {Kind::div, "div", "/"},  {Kind::rem, "rem", "%"},  {Kind::min, "min", nullptr},
    {Kind::max, "max", nullptr}, {Kind::cdiv, "cdiv", nullptr},
    {Kind::balanced, "balanced", nullptr}, {Kind::eq, "eq", "=="},
    {Kind::ne, "ne", "!="},   {Kind::slt, "slt", "<"},  {Kind::sle, "sle", "<="},
    {Kind::sgt, "sgt", ">"},  {Kind::sge, "sge", ">="}, {Kind::ult, "ult", "<"},
    {Kind::ule, "ule", "<="}, {Kind::ugt, "ugt", ">"},  {Kind::uge, "uge", ">="},
};

const OpName* op_of(Kind k) {
  for (const OpName& o : kOps)
    if (o.kind == k) return &o;
  return nullptr;
}

bool is_unsigned(Kind k) { return k == Kind::ult || k == Kind::ule || k == Kind::ugt || k == Kind::uge; }

// Recursive descent over the whole text; `at` moves past what was read.
class Parser {
 public:
  explicit Parser(const std::string& t) : text_(t) {}

  Result<HostExpr> parse_all() {
    PK_ASSIGN_OR_RETURN(HostExpr e, expr());
    if (at_ != text_.size()) return fail("unexpected text");
    return e;
  }

 private:
  Status fail(const std::string& what) const {
    return Status::error("host check expression '" + text_ + "': " + what + " at offset " +
                         std::to_string(at_));
  }
  bool eat(char c) {
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  Result<long long> integer() {
    const std::size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) ++at_;
    if (at_ == start || (at_ == start + 1 && text_[start] == '-')) return fail("expected a number");
    try {
      return std::stoll(text_.substr(start, at_ - start));
    } catch (...) {
      return fail("number out of range");
    }
  }
  Result<HostExpr> expr() {
    if (at_ < text_.size() && (text_[at_] == '-' || std::isdigit(static_cast<unsigned char>(text_[at_])))) {
      PK_ASSIGN_OR_RETURN(long long v, integer());
      return HostExpr::constant(v);
    }
    const std::size_t start = at_;
    while (at_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[at_]))) ++at_;
    const std::string word = text_.substr(start, at_ - start);
    if (word == "world") return HostExpr::world();
    if (word == "rank") return HostExpr::leaf(Kind::rank);
    if (word == "sms") return HostExpr::leaf(Kind::sms);
    if (!eat('(')) return fail("expected '(' after '" + word + "'");
    if (word == "dim" || word == "arg") {
      PK_ASSIGN_OR_RETURN(long long a, integer());
      long long k = 0;
      if (word == "dim") {
        if (!eat(',')) return fail("expected ','");
        PK_ASSIGN_OR_RETURN(k, integer());
      }
      if (!eat(')')) return fail("expected ')'");
      if (a < 0 || a > 1000 || k < 0 || k > 3) return fail("argument or extent out of range");
      return word == "dim" ? HostExpr::extent(int(a), int(k)) : HostExpr::scalar(int(a));
    }
    Kind kind;
    if (!host_op_kind(word, &kind)) return fail("unknown operation '" + word + "'");
    PK_ASSIGN_OR_RETURN(HostExpr a, expr());
    if (!eat(',')) return fail("expected ','");
    PK_ASSIGN_OR_RETURN(HostExpr b, expr());
    if (!eat(')')) return fail("expected ')'");
    return HostExpr::op(kind, std::move(a), std::move(b));
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

// The next space-separated word of `line` from `*at` (empty at the end); plain string code
// rather than iostreams, which crashed inside a PyTorch extension built by another compiler.
std::string next_word(const std::string& line, std::size_t* at) {
  const std::size_t begin = line.find_first_not_of(' ', *at);
  if (begin == std::string::npos) return *at = line.size(), std::string();
  std::size_t end = line.find(' ', begin);
  if (end == std::string::npos) end = line.size();
  *at = end;
  return line.substr(begin, end - begin);
}

// "key=<value>" as the next word of `line`.
Result<std::string> field(const std::string& line, std::size_t* at, const std::string& key) {
  const std::string f = next_word(line, at);
  if (f.rfind(key + "=", 0) != 0)
    return Status::error("malformed pk-host-check line (no " + key + "=): " + line);
  return f.substr(key.size() + 1);
}

}  // namespace

HostExpr HostExpr::constant(long long v) {
  HostExpr e;
  e.value = v;
  return e;
}
HostExpr HostExpr::world() { return leaf(Kind::world); }
HostExpr HostExpr::leaf(Kind kind) {
  HostExpr e;
  e.kind = kind;
  return e;
}
HostExpr HostExpr::extent(int arg, int k) {
  HostExpr e;
  e.kind = Kind::dim;
  e.value = arg;
  e.dim = k;
  return e;
}
HostExpr HostExpr::scalar(int arg) {
  HostExpr e;
  e.kind = Kind::arg;
  e.value = arg;
  return e;
}
HostExpr HostExpr::op(Kind kind, HostExpr a, HostExpr b) {
  HostExpr e;
  e.kind = kind;
  e.operands.push_back(std::move(a));
  e.operands.push_back(std::move(b));
  return e;
}

bool host_op_kind(const std::string& name, HostExpr::Kind* kind) {
  for (const OpName& o : kOps)
    if (name == o.name) return *kind = o.kind, true;
  return false;
}

std::string print_host_expr(const HostExpr& e) {
  switch (e.kind) {
    case Kind::constant: return std::to_string(e.value);
    case Kind::world: return "world";
    case Kind::rank: return "rank";
    case Kind::sms: return "sms";
    case Kind::dim: return "dim(" + std::to_string(e.value) + "," + std::to_string(e.dim) + ")";
    case Kind::arg: return "arg(" + std::to_string(e.value) + ")";
    default:
      return std::string(op_of(e.kind)->name) + "(" + print_host_expr(e.operands[0]) + "," +
             print_host_expr(e.operands[1]) + ")";
  }
}

Result<HostExpr> parse_host_expr(const std::string& text) { return Parser(text).parse_all(); }

std::string print_host_check(const HostCheck& c) {
  std::string message = c.message;
  for (char& ch : message)
    if (ch == '\n' || ch == '\r') ch = ' ';  // one line
  return "// pk-host-check " + c.kernel + " " + std::to_string(c.id) +
         " if=" + print_host_expr(c.condition) + " expected=" + print_host_expr(c.expected) +
         " actual=" + print_host_expr(c.actual) + (c.twin_rule ? " twin_rule " : " ") + message;
}

Result<HostCheck> parse_host_check(const std::string& line) {
  static const std::string prefix = "// pk-host-check ";
  if (line.rfind(prefix, 0) != 0) return Status::error("not a pk-host-check line: " + line);
  std::size_t at = prefix.size();
  HostCheck c;
  c.kernel = next_word(line, &at);
  const std::string id = next_word(line, &at);
  char* end = nullptr;
  const long parsed = id.empty() ? -1 : std::strtol(id.c_str(), &end, 10);
  if (c.kernel.empty() || id.empty() || *end != '\0' || parsed < 0 || parsed > 1 << 30)
    return Status::error("malformed pk-host-check line (kernel and id): " + line);
  c.id = static_cast<int>(parsed);
  PK_ASSIGN_OR_RETURN(std::string cond, field(line, &at, "if"));
  PK_ASSIGN_OR_RETURN(std::string expected, field(line, &at, "expected"));
  PK_ASSIGN_OR_RETURN(std::string actual, field(line, &at, "actual"));
  PK_ASSIGN_OR_RETURN(c.condition, parse_host_expr(cond));
  PK_ASSIGN_OR_RETURN(c.expected, parse_host_expr(expected));
  PK_ASSIGN_OR_RETURN(c.actual, parse_host_expr(actual));
  std::size_t mark = at;
  if (next_word(line, &mark) == "twin_rule") c.twin_rule = true, at = mark;
  const std::size_t message = line.find_first_not_of(' ', at);
  if (message != std::string::npos) c.message = line.substr(message);
  if (c.message.empty()) return Status::error("pk-host-check line without a message: " + line);
  return c;
}

Result<std::vector<HostCheck>> host_checks_of(const std::string& cuda, const std::string& kernel) {
  std::vector<HostCheck> out;
  const std::string marker = "// pk-host-check " + kernel + " ";
  for (std::size_t begin = 0; begin < cuda.size();) {
    std::size_t end = cuda.find('\n', begin);
    if (end == std::string::npos) end = cuda.size();
    if (cuda.compare(begin, marker.size(), marker) == 0) {
      std::string line = cuda.substr(begin, end - begin);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      PK_ASSIGN_OR_RETURN(HostCheck c, parse_host_check(line));
      out.push_back(std::move(c));
    }
    begin = end + 1;
  }
  return out;
}

Result<long long> evaluate_host_expr(const HostExpr& e, const HostValues& v) {
  switch (e.kind) {
    case Kind::constant: return e.value;
    case Kind::world: return v.world;
    case Kind::rank: return v.rank;
    case Kind::sms: return v.sms;
    case Kind::dim: return v.extent(int(e.value), e.dim);
    case Kind::arg: return v.scalar(int(e.value));
    default: break;
  }
  PK_ASSIGN_OR_RETURN(long long a, evaluate_host_expr(e.operands[0], v));
  PK_ASSIGN_OR_RETURN(long long b, evaluate_host_expr(e.operands[1], v));
  const auto ua = static_cast<unsigned long long>(a), ub = static_cast<unsigned long long>(b);
  switch (e.kind) {
    // Wrapping like the kernel's 64-bit arithmetic, without signed overflow on the host.
    case Kind::add: return static_cast<long long>(ua + ub);
    case Kind::sub: return static_cast<long long>(ua - ub);
    case Kind::mul: return static_cast<long long>(ua * ub);
    case Kind::div:
    case Kind::rem:
    case Kind::cdiv:
      if (host_division_fails(a, b))
        return Status::error("division by " + std::to_string(b) + " in " + print_host_expr(e));
      return e.kind == Kind::div ? a / b : e.kind == Kind::rem ? a % b : host_cdiv(a, b);
    case Kind::min: return a < b ? a : b;
    case Kind::max: return a > b ? a : b;
    case Kind::balanced: return balanced_blocks(a, b);
    case Kind::eq: return a == b;
    case Kind::ne: return a != b;
    case Kind::slt: return a < b;
    case Kind::sle: return a <= b;
    case Kind::sgt: return a > b;
    case Kind::sge: return a >= b;
    case Kind::ult: return ua < ub;
    case Kind::ule: return ua <= ub;
    case Kind::ugt: return ua > ub;
    case Kind::uge: return ua >= ub;
    default: return Status::error("bad host check expression");
  }
}

Status run_host_check(const HostCheck& c, const HostValues& v) {
  PK_ASSIGN_OR_RETURN(long long ok, evaluate_host_expr(c.condition, v));
  if (ok) return Status::ok();
  PK_ASSIGN_OR_RETURN(long long expected, evaluate_host_expr(c.expected, v));
  PK_ASSIGN_OR_RETURN(long long actual, evaluate_host_expr(c.actual, v));
  return Status::error(c.message + ": expected " + std::to_string(expected) + ", got " +
                       std::to_string(actual));
}

std::string host_expr_cpp(const HostExpr& e, const std::function<std::string(int arg)>& name) {
  switch (e.kind) {
    case Kind::constant: return std::to_string(e.value) + "LL";
    case Kind::world: return "world";
    case Kind::rank: return "rank";
    case Kind::sms: return "sms";
    case Kind::dim: return name(int(e.value)) + ".shape[" + std::to_string(e.dim) + "]";
    case Kind::arg: return "static_cast<long long>(" + name(int(e.value)) + ")";
    default: break;
  }
  std::string a = host_expr_cpp(e.operands[0], name), b = host_expr_cpp(e.operands[1], name);
  switch (e.kind) {
    case Kind::min: return "std::min<long long>(" + a + ", " + b + ")";
    case Kind::max: return "std::max<long long>(" + a + ", " + b + ")";
    case Kind::cdiv: return "pk::host_cdiv(" + a + ", " + b + ")";
    case Kind::balanced: return "pk::balanced_blocks(" + a + ", " + b + ")";
    default: break;
  }
  if (is_unsigned(e.kind))
    a = "static_cast<unsigned long long>(" + a + ")", b = "static_cast<unsigned long long>(" + b + ")";
  return "(" + a + " " + op_of(e.kind)->cpp + " " + b + ")";
}

long long host_cdiv(long long a, long long b) { return a / b + (a % b != 0 && (a < 0) == (b < 0)); }

long long balanced_blocks(long long tiles, long long sms) {
  if (tiles <= 0) return 1;
  const long long waves = host_cdiv(tiles, sms > 0 ? sms : 1);
  return host_cdiv(tiles, waves);
}

void for_each_host_ref(const HostExpr& e, const std::function<void(int arg, bool is_extent)>& f) {
  if (e.kind == Kind::dim || e.kind == Kind::arg) f(int(e.value), e.kind == Kind::dim);
  for (const HostExpr& o : e.operands) for_each_host_ref(o, f);
}

void for_each_host_division(const HostExpr& e,
                            const std::function<void(const HostExpr& a, const HostExpr& b)>& f) {
  for (const HostExpr& o : e.operands) for_each_host_division(o, f);
  if (e.kind == Kind::div || e.kind == Kind::rem || e.kind == Kind::cdiv) f(e.operands[0], e.operands[1]);
}

bool host_division_fails(long long a, long long b) { return b == 0 || (a == LLONG_MIN && b == -1); }

}  // namespace pk
