// Integer tile divisions by a scalar fixed where it is defined (`ids / experts`): the scalar
// gets a pk::tile::Divisor beside its definition, and the maps that divide by a splat of it
// multiply instead of dividing (pk/tile/divisor.cuh).
#include "Emitter.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

// Whether `map` divides (or takes the remainder of) int tile values by a splat, which it returns.
TileSplatOp splatDivisorOf(Operation *op) {
  auto map = dyn_cast<TileMapOp>(op);
  if (!map || (map.getKind() != MapKind::div && map.getKind() != MapKind::rem) ||
      map.getInputs().size() != 2 ||
      !cast<TileType>(map.getInputs()[0].getType()).getElementType().isSignlessInteger(32))
    return {};
  return map.getInputs()[1].getDefiningOp<TileSplatOp>();
}

} // namespace

void mlir::pk::cuda::declareDivisor(Emitter &e, Value scalar) {
  if (!isa<IntegerType, IndexType>(scalar.getType()) || e.divisors.count(scalar)) return;
  bool divides = false;
  for (Operation *user : scalar.getUsers())
    if (auto splat = dyn_cast<TileSplatOp>(user))
      for (Operation *map : splat->getUsers())
        divides |= splatDivisorOf(map) == splat;
  if (!divides) return;
  std::string d = e.fresh("divisor");
  // The map's divisor is the scalar as an int tile element (an index narrows by wrapping).
  e.line() << "const pk::tile::Divisor " << d << "(pk::tile::convert<int>(" << e.name(scalar)
           << "));";
  e.divisors[scalar] = d;
}

std::string mlir::pk::cuda::divisorExpression(Emitter &e, Operation *map, const std::string &x) {
  TileSplatOp splat = splatDivisorOf(map);
  if (!splat) return "";
  auto d = e.divisors.find(splat.getScalar());
  if (d == e.divisors.end()) return "";
  return d->second + (cast<TileMapOp>(map).getKind() == MapKind::div ? ".div(" : ".rem(") + x + ")";
}
