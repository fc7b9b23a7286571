// Reads the `// pk-launch` lines pkc writes above every kernel (launch facts and argument types)
// and the `// pk-host-check` lines that follow them.
#include <pk/jit/kernel.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace pk::jit {
namespace {

Result<ArgSpec> parse_type(const std::string& text) {
  ArgSpec a;
  a.text = text;
  std::string body;
  if (text.rfind("!pk.sym<", 0) == 0) {
    a.kind = ArgKind::sym_tensor;
    body = text.substr(8);
  } else if (text.rfind("!pk.tensor<", 0) == 0) {
    a.kind = ArgKind::tensor;
    body = text.substr(11);
  } else {
    a.kind = ArgKind::scalar;
    a.element = text;
    return a;
  }
  if (body.empty() || body.back() != '>') return Status::error("bad argument type '" + text + "'");
  body.pop_back();
  // "?x4096xbf16": extents, then the element type.
  std::stringstream parts(body);
  std::vector<std::string> pieces;
  for (std::string p; std::getline(parts, p, 'x');) pieces.push_back(p);
  if (pieces.size() < 2) return Status::error("bad tensor type '" + text + "'");
  a.element = pieces.back();
  for (std::size_t i = 0; i + 1 < pieces.size(); ++i)
    a.shape.push_back(pieces[i] == "?" ? -1 : std::atoll(pieces[i].c_str()));
  return a;
}

// "a,b,c" -> {a, b, c}, splitting only outside <...>.
std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : value + ",") {
    depth += c == '<' ? 1 : c == '>' ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// A launch or sequence line after its marker: the kernel's name into `name`, then its
// `key=value` fields in order (words without `=` are skipped).
std::vector<std::pair<std::string, std::string>> fields_of(const std::string& rest, std::string& name) {
  std::stringstream words(rest);
  words >> name;
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string f; words >> f;) {
    const std::size_t eq = f.find('=');
    if (eq != std::string::npos) out.emplace_back(f.substr(0, eq), f.substr(eq + 1));
  }
  return out;
}

// `args=` of a launch or sequence line: the spec's argument types, comma-separated.
Result<std::vector<ArgSpec>> parse_args(const std::string& value) {
  std::vector<ArgSpec> args;
  for (const std::string& t : split_list(value)) {
    PK_ASSIGN_OR_RETURN(ArgSpec a, parse_type(t));
    args.push_back(std::move(a));
  }
  return args;
}

// `// pk-sequence <name> parts=<a>,<b> args=...`: a kernel pkc runs as several launches.
Result<KernelInfo> parse_sequence_line(const std::string& line) {
  KernelInfo k;
  for (const auto& [key, value] : fields_of(line.substr(15), k.name)) {
    if (key == "parts") k.parts = split_list(value);
    if (key == "loop") {
      KernelInfo::PartLoop l;
      const std::size_t a = value.find(':'), b = value.find(':', a + 1);
      std::vector<std::string> bounds;
      std::stringstream rest(b == std::string::npos ? "" : value.substr(b + 1));
      for (std::string x; std::getline(rest, x, ';');) bounds.push_back(x);
      if (a == std::string::npos || b == std::string::npos || bounds.size() != 3)
        return Status::error("malformed loop in pk-sequence line: " + line);
      l.first = std::atoi(value.substr(0, a).c_str());
      l.count = std::atoi(value.substr(a + 1, b - a - 1).c_str());
      PK_ASSIGN_OR_RETURN(l.lb, parse_host_expr(bounds[0]));
      PK_ASSIGN_OR_RETURN(l.ub, parse_host_expr(bounds[1]));
      PK_ASSIGN_OR_RETURN(l.step, parse_host_expr(bounds[2]));
      k.loops.push_back(std::move(l));
    }
    if (key == "args") {
      PK_ASSIGN_OR_RETURN(k.args, parse_args(value));
    }
  }
  if (k.name.empty() || k.parts.empty()) return Status::error("malformed pk-sequence line: " + line);
  return k;
}

}  // namespace

Result<std::vector<KernelInfo>> parse_launch_lines(const std::string& cuda) {
  std::vector<KernelInfo> out;
  std::stringstream lines(cuda);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// pk-sequence ", 0) == 0) {
      PK_ASSIGN_OR_RETURN(KernelInfo k, parse_sequence_line(line));
      out.push_back(std::move(k));
      continue;
    }
    if (line.rfind("// pk-launch ", 0) != 0) continue;
    KernelInfo k;
    for (const auto& [key, value] : fields_of(line.substr(13), k.name)) {
      if (key == "threads") k.threads = std::atoi(value.c_str());
      if (key == "blocks") k.blocks = std::atoi(value.c_str());
      if (key == "flag_slots") k.flag_slots = std::atoi(value.c_str());
      if (key == "blocks_per_sm") k.blocks_per_sm = std::max(1, std::atoi(value.c_str()));
      if (key == "flags_by_size") k.flags_by_size = value == "1";
      if (key == "smem") k.shared_bytes = static_cast<unsigned>(std::max(0, std::atoi(value.c_str())));
      if (key == "args") {
        PK_ASSIGN_OR_RETURN(k.args, parse_args(value));
      }
    }
    PK_ASSIGN_OR_RETURN(k.tmpl, template_launch_of(cuda, k.name));
    if (!k.tmpl.kernel.empty()) k.threads = k.tmpl.threads;  // the grid comes from the sizes
    if (k.name.empty() || k.threads <= 0 || (k.blocks <= 0 && k.tmpl.kernel.empty()))
      return Status::error("malformed pk-launch line: " + line);
    // Symmetric fields take symmetric tensors, f32 a float scalar (or none: 0), the others tensors.
    for (const ParamField& f : k.tmpl.fields)
      if (f.arg >= int(k.args.size()) ||
          ((f.kind == ParamField::Kind::tmaps || f.kind == ParamField::Kind::ptrs) &&
           k.args[f.arg].kind != ArgKind::sym_tensor) ||
          (f.kind == ParamField::Kind::f32 && f.arg >= 0 &&
           (k.args[f.arg].kind != ArgKind::scalar ||
            (k.args[f.arg].element != "f32" && k.args[f.arg].element != "f64"))) ||
          (f.arg >= 0 && f.kind != ParamField::Kind::f32 && k.args[f.arg].kind == ArgKind::scalar))
        return Status::error("pk-param " + f.member + " of " + k.name +
                             " names an argument the pk-launch line does not have as such");
    PK_ASSIGN_OR_RETURN(k.copy_engine, parse_copy_engine_route(line));
    if (k.copy_engine && (k.copy_engine->x >= int(k.args.size()) ||
                          k.copy_engine->y >= int(k.args.size()) ||
                          k.copy_engine->root >= int(k.args.size()) ||
                          k.args[k.copy_engine->x].kind != ArgKind::sym_tensor))
      return Status::error("pk-launch line of " + k.name + ": copy_engine names arguments it lacks");
    PK_ASSIGN_OR_RETURN(k.checks, host_checks_of(cuda, k.name));
    for (const HostCheck& c : k.checks) {
      bool ok = true;
      auto ref = [&](int a, bool extent) {
        ok = ok && a < int(k.args.size()) && (k.args[a].kind == ArgKind::scalar) != extent;
      };
      for (const HostExpr* e : {&c.condition, &c.expected, &c.actual}) for_each_host_ref(*e, ref);
      if (!ok)
        return Status::error("pk-host-check " + std::to_string(c.id) + " of " + k.name +
                             " reads an argument the pk-launch line does not have as such");
    }
    out.push_back(std::move(k));
  }
  if (out.empty()) return Status::error("no '// pk-launch' line in the CUDA: not pkc's output?");
  for (const KernelInfo& k : out) {
    for (const KernelInfo::PartLoop& l : k.loops)
      if (l.first < 0 || l.count < 1 || l.first + l.count > int(k.parts.size()))
        return Status::error("pk-sequence " + k.name + ": a loop names parts it lacks");
    // Host loops nest or are apart, never overlap.
    for (const KernelInfo::PartLoop& a : k.loops)
      for (const KernelInfo::PartLoop& b : k.loops) {
        const bool apart = a.first + a.count <= b.first || b.first + b.count <= a.first;
        const bool nested = (a.first <= b.first && b.first + b.count <= a.first + a.count) ||
                            (b.first <= a.first && a.first + a.count <= b.first + b.count);
        if (!apart && !nested) return Status::error("pk-sequence " + k.name + ": host loops overlap");
      }
    for (std::size_t i = 0; i < k.parts.size(); ++i) {
      // A part in host loops takes their trips' induction variables last, outermost first.
      const std::size_t depth = std::count_if(k.loops.begin(), k.loops.end(), [&](const KernelInfo::PartLoop& l) {
        return int(i) >= l.first && int(i) < l.first + l.count;
      });
      auto it = std::find_if(out.begin(), out.end(), [&](const KernelInfo& p) { return p.name == k.parts[i]; });
      bool trips = it != out.end() && it->args.size() == k.args.size() + depth;
      for (std::size_t a = k.args.size(); trips && a < it->args.size(); ++a) trips = it->args[a].element == "index";
      if (it == out.end() || !it->parts.empty() || !trips)
        return Status::error("pk-sequence " + k.name + ": part " + k.parts[i] +
                             " has no pk-launch line with the sequence's arguments" +
                             (depth ? " and its trips' indices" : ""));
    }
  }
  return out;
}

}  // namespace pk::jit
