// pkc-opt: mlir-opt with the pk dialect and pkc's passes, for tests and debugging.
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "pk/Dialect/Pk.h"
#include "pk/Passes/Passes.h"
#include "pk/Pipeline/Pipeline.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::pk::PkDialect, mlir::arith::ArithDialect, mlir::scf::SCFDialect>();
  mlir::pk::registerPkPasses();
  pk::registerPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "pkc-opt: the pk dialect\n", registry));
}
