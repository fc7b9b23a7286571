// The `// pk-template` and `// pk-param` lines: layout, print and parse
// (pk/runtime/template_params.h).
#include <pk/runtime/template_params.h>

#include <cstdlib>

#include <pk/device/launch_context.cuh>
#include <pk/device/tensor_map.cuh>
#include <pk/device/tile_ticket.cuh>

namespace pk {
namespace {

using Kind = ParamField::Kind;

const struct {
  Kind kind;
  const char* name;
} kKinds[] = {{Kind::tmap, "tmap"}, {Kind::tmaps, "tmaps"}, {Kind::ctx, "ctx"},
              {Kind::i32, "i32"},   {Kind::i64, "i64"},     {Kind::f32, "f32"},     {Kind::ptr, "ptr"},
              {Kind::ptrs, "ptrs"}, {Kind::ticket, "ticket"},
              {Kind::workspace, "workspace"}};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  for (std::size_t at = 0; at <= text.size(); ++at)
    if (at == text.size() || text[at] == sep) out.push_back(text.substr(begin, at - begin)), begin = at + 1;
  return out;
}

// Space-separated words (plain string code: iostreams crashed inside a PyTorch extension).
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  for (std::string& w : split(line, ' '))
    if (!w.empty()) out.push_back(std::move(w));
  return out;
}

// Expressions may contain commas inside parentheses: split at depth 0 only.
std::vector<std::string> split_top(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth == 0) out.push_back(cur), cur.clear();
    else cur += c;
  }
  out.push_back(cur);
  return out;
}

bool number(const std::string& s, long long* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  *v = std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && *v >= 0 && *v < (1ll << 40);
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

Result<ParamField> parse_param(const std::vector<std::string>& w, const std::string& line) {
  auto bad = [&](const std::string& why) {
    return Status::error("malformed pk-param line (" + why + "): " + line);
  };
  // "//", "pk-param", kernel, offset, member, kind, then the kind's fields.
  if (w.size() < 6) return bad("too few fields");
  ParamField f;
  long long offset = 0;
  if (!number(w[3], &offset)) return bad("offset");
  f.offset = static_cast<std::size_t>(offset);
  f.member = w[4];
  bool known = false;
  for (const auto& k : kKinds)
    if (w[5] == k.name) f.kind = k.kind, known = true;
  if (!known) return bad("unknown kind '" + w[5] + "'");
  for (std::size_t i = 6; i < w.size(); ++i) {
    const std::string& x = w[i];
    long long v = 0;
    if (x.rfind("arg=", 0) == 0) {
      if (!number(x.substr(4), &v) || v > 1000) return bad("arg");
      f.arg = int(v);
    } else if (x.rfind("dims=", 0) == 0) {
      for (const std::string& d : split_top(x.substr(5))) {
        PK_ASSIGN_OR_RETURN(HostExpr e, parse_host_expr(d));
        f.dims.push_back(std::move(e));
      }
    } else if (x.rfind("box=", 0) == 0) {
      for (const std::string& b : split(x.substr(4), 'x')) {
        if (!number(b, &v) || v < 1 || v > 256) return bad("box");
        f.box.push_back(int(v));
      }
    } else if (x == "noswizzle") {
      f.swizzle = false;
    } else {
      PK_ASSIGN_OR_RETURN(f.value, parse_host_expr(x));
    }
  }
  const bool maps = f.kind == Kind::tmap || f.kind == Kind::tmaps;
  const bool takes_arg = maps || f.kind == Kind::f32 || f.kind == Kind::ptr || f.kind == Kind::ptrs;
  // A ptr field without an argument is a null pointer (a result the spec does not store), an f32
  // one zero (a value the kernel takes from elsewhere): described so later offsets stay right.
  const bool zero = (f.kind == Kind::ptr || f.kind == Kind::f32) && f.arg < 0;
  if (takes_arg != (f.arg >= 0) && !zero) return bad(takes_arg ? "no arg=" : "arg= on a field without one");
  if (maps && (f.dims.size() < 2 || f.dims.size() > 3 || f.box.size() != f.dims.size()))
    return bad("a tensor map needs 2 or 3 dims and as many box extents");
  return f;
}

}  // namespace

std::size_t param_field_bytes(Kind kind) {
  switch (kind) {
    case Kind::tmap: return sizeof(TensorMap);
    case Kind::tmaps: return sizeof(TensorMap) * PK_MAX_RANKS;
    case Kind::ctx: return sizeof(LaunchContext);
    case Kind::i32: return sizeof(int);
    case Kind::i64: return sizeof(long long);
    case Kind::f32: return sizeof(float);
    case Kind::ptr: return sizeof(void*);
    case Kind::ptrs: return sizeof(void*) * PK_MAX_RANKS;
    case Kind::ticket: return sizeof(TileTicket);
    case Kind::workspace: return sizeof(void*);
  }
  return 0;
}

std::size_t param_field_align(Kind kind) {
  switch (kind) {
    case Kind::tmap:
    case Kind::tmaps: return alignof(TensorMap);
    case Kind::ctx: return alignof(LaunchContext);
    case Kind::i32: return alignof(int);
    case Kind::i64: return alignof(long long);
    case Kind::f32: return alignof(float);
    case Kind::ptr:
    case Kind::ptrs: return alignof(void*);
    case Kind::ticket: return alignof(TileTicket);
    case Kind::workspace: return alignof(void*);
  }
  return 1;
}

std::size_t lay_out_params(std::vector<ParamField>& fields) {
  std::size_t at = 0, align = 1;
  for (ParamField& f : fields) {
    const std::size_t a = param_field_align(f.kind);
    f.offset = (at + a - 1) / a * a;
    at = f.offset + param_field_bytes(f.kind);
    align = a > align ? a : align;
  }
  return (at + align - 1) / align * align;
}

const char* param_kind_name(Kind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

std::string print_template_launch(const TemplateLaunch& t) {
  std::string out = "// pk-template " + t.kernel + " threads=" + std::to_string(t.threads) +
                    " smem=" + std::to_string(t.shared_bytes) + " grid=" + print_host_expr(t.grid) +
                    " params=" + std::to_string(t.params_bytes);
  if (!t.zero_args.empty()) {
    std::vector<std::string> zs;
    for (int a : t.zero_args) zs.push_back(std::to_string(a));
    out += " zero=" + joined(zs, ",");
  }
  if (!t.fallback.empty()) out += " fallback=" + t.fallback;
  out += "\n";
  for (const ParamField& f : t.fields) {
    out += "// pk-param " + t.kernel + " " + std::to_string(f.offset) + " " + f.member + " " +
           param_kind_name(f.kind);
    if (f.arg >= 0) out += " arg=" + std::to_string(f.arg);
    if (f.kind == Kind::i32 || f.kind == Kind::i64 || f.kind == Kind::workspace)
      out += " " + print_host_expr(f.value);
    if (!f.dims.empty()) {
      std::vector<std::string> ds, bs;
      for (const HostExpr& d : f.dims) ds.push_back(print_host_expr(d));
      for (int b : f.box) bs.push_back(std::to_string(b));
      out += " dims=" + joined(ds, ",") + " box=" + joined(bs, "x");
      if (!f.swizzle) out += " noswizzle";
    }
    out += "\n";
  }
  return out;
}

Result<TemplateLaunch> template_launch_of(const std::string& cuda, const std::string& kernel) {
  TemplateLaunch t;
  const std::string head = "// pk-template " + kernel + " ", param = "// pk-param " + kernel + " ";
  bool seen = false;
  for (const std::string& raw : split(cuda, '\n')) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<std::string> w = words_of(line);
    if (line.rfind(head, 0) == 0) {
      seen = true;
      t.kernel = kernel;
      for (std::size_t i = 3; i < w.size(); ++i) {
        const std::size_t eq = w[i].find('=');
        const std::string key = w[i].substr(0, eq), value = eq == std::string::npos ? "" : w[i].substr(eq + 1);
        long long v = 0;
        if (key == "threads" && number(value, &v)) t.threads = int(v);
        else if (key == "smem" && number(value, &v)) t.shared_bytes = unsigned(v);
        else if (key == "params" && number(value, &v)) t.params_bytes = std::size_t(v);
        else if (key == "grid") {
          PK_ASSIGN_OR_RETURN(t.grid, parse_host_expr(value));
        } else if (key == "fallback" && !value.empty()) {
          t.fallback = value;
        } else if (key == "zero") {
          for (const std::string& z : split(value, ',')) {
            if (!number(z, &v) || v > 1000) return Status::error("malformed pk-template zero=: " + line);
            t.zero_args.push_back(int(v));
          }
        } else {
          return Status::error("malformed pk-template line ('" + w[i] + "'): " + line);
        }
      }
      if (t.threads <= 0 || t.params_bytes == 0)
        return Status::error("pk-template line without threads= or params=: " + line);
    } else if (line.rfind(param, 0) == 0) {
      PK_ASSIGN_OR_RETURN(ParamField f, parse_param(w, line));
      t.fields.push_back(std::move(f));
    }
  }
  if (!seen) {
    if (!t.fields.empty()) return Status::error("pk-param lines of " + kernel + " without its pk-template line");
    return TemplateLaunch{};
  }
  // Fields in order, inside the block, not overlapping: a malformed description is an error,
  // never a write past the block.
  std::size_t end = 0;
  for (const ParamField& f : t.fields) {
    if (f.offset < end || f.offset % param_field_align(f.kind) != 0 ||
        f.offset + param_field_bytes(f.kind) > t.params_bytes)
      return Status::error("pk-param " + f.member + " of " + kernel + " at offset " +
                           std::to_string(f.offset) + " overlaps another field or leaves the " +
                           std::to_string(t.params_bytes) + "-byte block");
    end = f.offset + param_field_bytes(f.kind);
  }
  return t;
}

}  // namespace pk
