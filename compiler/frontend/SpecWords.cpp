// Verifier messages in spec words (see SpecWords.h).
#include "SpecWords.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Regex.h"

namespace pk::fe {
namespace {

// The construct a C++ spec writes for each op the frontend builds; ops missing here are
// named by their last word (pk.coll.all_gather -> all_gather).
const llvm::StringMap<const char *> &constructs() {
  static const llvm::StringMap<const char *> map = {
      {"pk.kernel", "PK_KERNEL"},
      {"pk.tile.foreach", "tile loop"},
      {"pk.tile.map", "tile arithmetic"},
      {"pk.tile.reduce_rows", "row reduction"},
      {"pk.tile.select", "where"},
      {"pk.tile.iota", "row_index / col_index"},
      {"pk.tile.splat", "a scalar beside a tile"},
      {"pk.tile.reshape", "a tile of the trailing dimensions"},
      {"pk.scalar_map", "float scalar arithmetic"},
      {"pk.load_scalar", "at"},
      {"pk.dim", "a tensor size"},
      {"pk.coll.store_tile", "store into a peer"},
      {"pk.coll.add_tile", "store_add"},
      {"pk.comm.load_peer", "prim::load_peer"},
      {"pk.comm.store_async", "prim::store_async"},
      {"pk.comm.store_add_async", "prim::store_add_async"},
      {"pk.comm.reduce", "prim::reduce"},
      {"pk.comm.all_reduce", "prim::all_reduce"},
      {"pk.sync.flag", "prim::flag"},
      {"pk.sync.signal", "prim::signal"},
      {"pk.sync.signal_all", "prim::signal_all"},
      {"pk.sync.wait", "prim::wait"},
      {"pk.sync.barrier", "prim::barrier"},
      {"scf.for", "range loop"},
  };
  return map;
}

// "16x64xf32" -> ("f32", "16, 64") and rank 2; "?x?xbf16" -> ("bf16", "", 2).
void splitShape(llvm::StringRef body, std::string &elem, std::string &dims, int &rank) {
  llvm::SmallVector<llvm::StringRef> parts;
  body.split(parts, 'x');
  elem = parts.back().str();
  rank = int(parts.size()) - 1;
  dims.clear();
  for (size_t i = 0; i + 1 < parts.size(); ++i) dims += (i ? ", " : "") + parts[i].str();
}

std::string replaceAll(std::string text, llvm::Regex &re,
                       std::string (*spell)(llvm::ArrayRef<llvm::StringRef>)) {
  llvm::SmallVector<llvm::StringRef> m;
  std::string out;
  llvm::StringRef rest = text;
  while (re.match(rest, &m)) {
    size_t at = m[0].data() - rest.data();
    out += rest.substr(0, at).str() + spell(m);
    rest = rest.substr(at + m[0].size());
  }
  return out + rest.str();
}

std::string elemName(llvm::StringRef e) {
  if (e == "f8E4M3FN") return "f8e4m3";
  if (e == "f8E5M2") return "f8e5m2";
  return e.str();
}

} // namespace

std::string specWords(llvm::StringRef message) {
  std::string text = message.str();
  static llvm::Regex prefix("^'([a-z_]+(\\.[a-z_]+)+)' op ");
  llvm::SmallVector<llvm::StringRef> m;
  if (prefix.match(text, &m)) {
    auto it = constructs().find(m[1]);
    std::string name = it != constructs().end() ? it->second : m[1].rsplit('.').second.str();
    text = name + ": " + text.substr(m[0].size());
  }
  // Tiles: !pk.tile<16x64xf32> or with a memory space (!pk.tile<16x64xbf16, smem>).
  static llvm::Regex tile("!pk\\.tile<([0-9x]+x[a-zA-Z0-9]+)(, [a-z]+)?>");
  text = replaceAll(text, tile, [](llvm::ArrayRef<llvm::StringRef> g) {
    std::string elem, dims;
    int rank;
    splitShape(g[1], elem, dims, rank);
    return "Tile<" + elemName(elem) + ", " + dims + ">";
  });
  // Tensors: !pk.tensor<?x?xbf16> -> Tensor<bf16, 2>, !pk.sym<...> -> Sym<...>.
  static llvm::Regex tensor("!pk\\.(tensor|sym)<([0-9?x]+x[a-zA-Z0-9]+)>");
  text = replaceAll(text, tensor, [](llvm::ArrayRef<llvm::StringRef> g) {
    std::string elem, dims;
    int rank;
    splitShape(g[2], elem, dims, rank);
    return std::string(g[1] == "sym" ? "Sym<" : "Tensor<") + elemName(elem) + ", " +
           std::to_string(rank) + ">";
  });
  static llvm::Regex fp8("(f8E4M3FN|f8E5M2)");
  text = replaceAll(text, fp8, [](llvm::ArrayRef<llvm::StringRef> g) { return elemName(g[1]); });
  return text;
}

} // namespace pk::fe
