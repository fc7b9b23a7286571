// RUN: pkc-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect
// One case per verifier message of the pk dialect.

// expected-error @+1 {{tile must have between 1 and 4 dimensions, got 5}}
pk.kernel @k(%a: !pk.tile<1x1x1x1x1xf32>) {
  pk.return
}

// -----

// expected-error @+1 {{tile dimensions must be positive and static}}
pk.kernel @k(%a: !pk.tile<0x4xf32>) {
  pk.return
}

// -----

// expected-error @+1 {{tensor dimensions must be positive or '?'}}
pk.kernel @k(%a: !pk.tensor<0xf32>) {
  pk.return
}

// -----

// expected-error @+1 {{symmetric tensor element type must be bf16, f16, f32, f64, fp8 (f8E4M3FN, f8E5M2), i8, i32 or i64, got 'i16'}}
pk.kernel @k(%a: !pk.sym<?xi16>) {
  pk.return
}

// -----

// expected-error @+1 {{expected memory space 'reg' or 'smem'}}
pk.kernel @k(%a: !pk.tile<4xf32, global>) {
  pk.return
}

// -----

// expected-error @+1 {{'pk.kernel' op must not return values; a kernel's effects are its stores}}
pk.kernel @k() -> index {
  pk.return
}

// -----

// expected-error @+1 {{'pk.kernel' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
pk.kernel @k()

// -----

// expected-error @+1 {{'pk.kernel' op argument #0 has type 'memref<4xf32>'; kernel arguments must be !pk.tensor, !pk.sym, index, integer or float}}
pk.kernel @k(%a: memref<4xf32>) {
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>) {
  // expected-error @+1 {{'pk.dim' op dimension 1 is out of range for a tensor of rank 1}}
  %n = pk.dim %x, 1 : !pk.sym<?xbf16>
  pk.return
}

// -----

pk.kernel @k() {
  // expected-error @+1 {{'pk.tile.foreach' op needs at least one dimension}}
  pk.tile.foreach () to () step [] {
  }
  pk.return
}

// -----

pk.kernel @k(%n: index) {
  // expected-error @+1 {{'pk.tile.foreach' op has 1 upper bounds but 2 steps}}
  pk.tile.foreach (%i) to (%n) step [4, 4] {
  }
  pk.return
}

// -----

pk.kernel @k(%n: index) {
  // expected-error @+1 {{'pk.tile.foreach' op body must take one index argument per dimension}}
  "pk.tile.foreach"(%n) <{steps = array<i64: 4>}> ({
    "pk.yield"() : () -> ()
  }) : (index) -> ()
  pk.return
}

// -----

pk.kernel @k(%n: index) {
  // expected-error @+1 {{'pk.tile.foreach' op steps must be positive, got 0}}
  pk.tile.foreach (%i) to (%n) step [0] {
  }
  pk.return
}

// -----

pk.kernel @k() {
  // expected-error @+1 {{'pk.worker' op block count must be 0 (chosen at launch) or positive}}
  pk.worker <loader> blocks -1 {
  }
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.tile.load' op needs 2 indices for a tensor of rank 2, got 1}}
  %t = pk.tile.load %a[%i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.tile.load' op tile rank 1 does not match tensor rank 2}}
  %t = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64xbf16>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  %t = pk.tile.zeros : !pk.tile<64x64xf32>
  // expected-error @+1 {{'pk.tile.store' op tile element type 'f32' does not match tensor element type 'bf16'}}
  pk.tile.store %t, %a[%i, %i] : !pk.tile<64x64xf32>, !pk.tensor<?x?xbf16>
  pk.return
}

// -----

pk.kernel @k() {
  // expected-error @+1 {{'pk.tile.zeros' op produces a register tile; load into shared memory instead}}
  %t = pk.tile.zeros : !pk.tile<64x64xf32, smem>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?xbf16>, %i: index) {
  %t = pk.tile.load %a[%i] : !pk.tensor<?xbf16> -> !pk.tile<64xbf16>
  %acc = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.tile.mma' op operands must be 2-D tiles}}
  %r = pk.tile.mma %t, %t, %acc : !pk.tile<64xbf16>, !pk.tile<64xbf16>, !pk.tile<64xf32>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  %x = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x32xbf16>
  %y = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
  %acc = pk.tile.zeros : !pk.tile<64x64xf32>
  // expected-error @+1 {{'pk.tile.mma' op inner dimensions differ: a is 64x32, b is 64x64}}
  %r = pk.tile.mma %x, %y, %acc : !pk.tile<64x32xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xf32>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  %x = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
  %acc = pk.tile.zeros : !pk.tile<32x64xf32>
  // expected-error @+1 {{'pk.tile.mma' op accumulator must be 64x64, got 32x64}}
  %r = pk.tile.mma %x, %x, %acc : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<32x64xf32>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  %x = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x32xbf16>
  %y = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<32x64xbf16>
  %acc = pk.tile.zeros : !pk.tile<64x64xf32>
  // expected-error @+1 {{'pk.tile.mma' op inner dimensions differ: a is 64x32, b is 32x64 (transposed)}}
  %r = pk.tile.mma %x, %y, %acc {transpose_b} : !pk.tile<64x32xbf16>, !pk.tile<32x64xbf16>, !pk.tile<64x64xf32>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xf32>, %i: index) {
  %x = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xf32> -> !pk.tile<64x64xf32>
  %acc = pk.tile.zeros : !pk.tile<64x64xf32>
  // expected-error @+1 {{'pk.tile.mma' op a and b must both be bf16, both f16, or both fp8 (e4m3 or e5m2)}}
  %r = pk.tile.mma %x, %x, %acc : !pk.tile<64x64xf32>, !pk.tile<64x64xf32>, !pk.tile<64x64xf32>
  pk.return
}

// -----

pk.kernel @k(%a: !pk.tensor<?x?xbf16>, %i: index) {
  %x = pk.tile.load %a[%i, %i] : !pk.tensor<?x?xbf16> -> !pk.tile<64x64xbf16>
  // expected-error @+1 {{'pk.tile.mma' op accumulator must be an f32 register tile}}
  %r = pk.tile.mma %x, %x, %x : !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>, !pk.tile<64x64xbf16>
  pk.return
}

// -----

pk.kernel @k() {
  %x = arith.constant 1.0 : f32
  // expected-error @+1 {{'pk.scalar_map' op 'sqrt' takes 1 operand(s), got 2}}
  %r = pk.scalar_map <sqrt> %x, %x
  pk.return
}

// -----

pk.kernel @k() {
  %x = arith.constant 1.0 : f32
  // expected-error @+1 {{'pk.scalar_map' op 'lt' is not a scalar kind}}
  %r = pk.scalar_map <lt> %x, %x
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.tile.map' op 'exp' takes 1 operand(s), got 2}}
  %r = pk.tile.map <exp> %t, %t : !pk.tile<64xf32>, !pk.tile<64xf32> -> !pk.tile<64xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.tile.map' op operands must have the result's tile type, or broadcast to it (a register tile of its rank and element type, each extent the result's or 1)}}
  %r = pk.tile.map <neg> %t : !pk.tile<64xf32> -> !pk.tile<32xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64x32xf32>
  %v = pk.tile.zeros : !pk.tile<32x1xf32>
  // expected-error @+1 {{'pk.tile.map' op operands must have the result's tile type, or broadcast to it (a register tile of its rank and element type, each extent the result's or 1)}}
  %r = pk.tile.map <sub> %t, %v : !pk.tile<64x32xf32>, !pk.tile<32x1xf32> -> !pk.tile<64x32xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %v = pk.tile.zeros : !pk.tile<64x1xf32>
  %w = pk.tile.zeros : !pk.tile<1x1xf32>
  // expected-error @+1 {{'pk.tile.map' op the result '!pk.tile<64x64xf32>' must take each extent from an operand}}
  %r = pk.tile.map <add> %v, %w : !pk.tile<64x1xf32>, !pk.tile<1x1xf32> -> !pk.tile<64x64xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.tile.cast' op cannot change the tile shape}}
  %r = pk.tile.cast %t : !pk.tile<64xf32> to !pk.tile<32xbf16>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.tile.reduce_rows' op input must be a 2-D tile}}
  %r = pk.tile.reduce_rows <sum> %t : !pk.tile<64xf32> -> !pk.tile<64x1xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64x32xf32>
  // expected-error @+1 {{'pk.tile.reduce_rows' op result must be a 64x1 tile}}
  %r = pk.tile.reduce_rows <sum> %t : !pk.tile<64x32xf32> -> !pk.tile<32x1xf32>
  pk.return
}

// -----

pk.kernel @k() {
  %t = pk.tile.zeros : !pk.tile<64x32xf32>
  // expected-error @+1 {{'pk.tile.reduce_rows' op result element type must equal the input's}}
  %r = pk.tile.reduce_rows <sum> %t : !pk.tile<64x32xf32> -> !pk.tile<64x1xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xf32>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op input and output element types differ}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xf64>, %y: !pk.tensor<?xf64>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op reductions support bf16, f16, f32, i32 and i64, got 'f64'}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xf64>, !pk.tensor<?xf64>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?x?xbf16>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op input and output ranks differ}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?x?xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<8xbf16>, %y: !pk.tensor<16xbf16>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op dimension 0 differs: 8 vs 16}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<8xbf16>, !pk.tensor<16xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?x8xbf16>, %y: !pk.sym<?x8xbf16>) {
  // expected-error @+1 {{'pk.coll.all_gather' op dimension 2 is out of range for a tensor of rank 2}}
  pk.coll.all_gather %x into %y {dim = 2 : i64} : !pk.sym<?x8xbf16>, !pk.sym<?x8xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<4x8xf32>, %y: !pk.sym<8x2xf32>) {
  // Along dimension 1 the first dimension must agree.
  // expected-error @+1 {{'pk.coll.reduce_scatter' op dimension 0 differs: 4 vs 8}}
  pk.coll.reduce_scatter <sum> %x into %y {dim = 1 : i64} : !pk.sym<4x8xf32>, !pk.sym<8x2xf32>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op transport 'tma' cannot reduce while reading; use ldst, multimem or auto}}
  pk.coll.all_reduce <sum> %x into %y {transport = #pk.transport<tma>} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?x?x64xbf16>, %y: !pk.sym<?x?x64xbf16>) {
  // expected-error @+1 {{'pk.coll.all_to_all' op concat_dim 3 is out of range for a tensor of rank 3}}
  pk.coll.all_to_all %x into %y {split_dim = 0 : i64, concat_dim = 3 : i64} : !pk.sym<?x?x64xbf16>, !pk.sym<?x?x64xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?x?x64xbf16>) {
  // expected-error @+1 {{'pk.coll.all_to_all' op in place needs split_dim == concat_dim: the two shapes differ}}
  pk.coll.all_to_all %x into %x {split_dim = 0 : i64, concat_dim = 1 : i64} : !pk.sym<?x?x64xbf16>, !pk.sym<?x?x64xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?x?x64xbf16>, %y: !pk.sym<?x?x32xbf16>) {
  // expected-error @+1 {{'pk.coll.all_to_all' op dimension 2 differs: 64 vs 32}}
  pk.coll.all_to_all %x into %y {split_dim = 0 : i64, concat_dim = 1 : i64} : !pk.sym<?x?x64xbf16>, !pk.sym<?x?x32xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?x?xbf16>, %y: !pk.sym<?x?xbf16>) {
  // expected-error @+1 {{'pk.coll.all_to_all' op dimension 2 is out of range for a tensor of rank 2}}
  pk.coll.all_to_all %x into %y {split_dim = 2 : i64, concat_dim = 2 : i64} : !pk.sym<?x?xbf16>, !pk.sym<?x?xbf16>
  pk.return
}

// -----

// Within one dimension other than 0 the two shapes are one: dimension 0 may not differ.
pk.kernel @k(%x: !pk.sym<8x?xbf16>, %y: !pk.sym<4x?xbf16>) {
  // expected-error @+1 {{'pk.coll.all_to_all' op dimension 0 differs: 8 vs 4}}
  pk.coll.all_to_all %x into %y {split_dim = 1 : i64, concat_dim = 1 : i64} : !pk.sym<8x?xbf16>, !pk.sym<4x?xbf16>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xf64>, %p: index) {
  %t = "test.tile"() : () -> !pk.tile<64xf64>
  // expected-error @+1 {{'pk.coll.add_tile' op adds support bf16, f16, f32, i32 and i64, got 'f64'}}
  pk.coll.add_tile %t, %c[%p] on %p : !pk.tile<64xf64>, !pk.sym<?xf64>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xf32>, %p: index) {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.comm.store_async' op needs a concrete transport; 'auto' is resolved by pk-select-transport}}
  pk.comm.store_async <auto> %t, %c[%p] on %p : !pk.tile<64xf32>, !pk.sym<?xf32>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xf32>, %p: index) {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.comm.store_async' op TMA transfers read the tile from shared memory; the tile is in registers}}
  pk.comm.store_async <tma> %t, %c[%p] on %p : !pk.tile<64xf32>, !pk.sym<?xf32>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xf32>, %p: index) {
  %t = pk.tile.zeros : !pk.tile<64xf32>
  // expected-error @+1 {{'pk.comm.store_add_async' op the copy engine is driven from the host and cannot move a tile}}
  pk.comm.store_add_async <copy_engine> %t, %c[%p] on %p : !pk.tile<64xf32>, !pk.sym<?xf32>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xf64>, %p: index) {
  %t = "test.tile"() : () -> !pk.tile<64xf64>
  // expected-error @+1 {{'pk.comm.store_add_async' op adds support bf16, f16, f32, i32 and i64, got 'f64'}}
  pk.comm.store_add_async <ldst> %t, %c[%p] on %p : !pk.tile<64xf64>, !pk.sym<?xf64>
  pk.return
}

// -----

pk.kernel @k(%c: !pk.sym<?xi32>, %p: index) {
  %t = "test.tile"() : () -> !pk.tile<64xi32, smem>
  // expected-error @+1 {{'pk.comm.store_add_async' op adds by tma support bf16, f16 and f32, got 'i32'; integer tiles add by ldst}}
  pk.comm.store_add_async <tma> %t, %c[%p] on %p : !pk.tile<64xi32, smem>, !pk.sym<?xi32>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.reduce' op reduces while reading, which needs transport ldst or multimem}}
  %t = pk.comm.reduce <sum> <tma> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<64xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xf64>, %i: index) {
  // expected-error @+1 {{'pk.comm.reduce' op reductions support bf16, f16, f32, i32 and i64, got 'f64'}}
  %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xf64> -> !pk.tile<64xf64>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.reduce' op produces a register tile}}
  %t = pk.comm.reduce <sum> <ldst> %x[%i] : !pk.sym<?xbf16> -> !pk.tile<64xbf16, smem>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xf32>, %i: index) {
  // expected-error @+1 {{'pk.comm.all_reduce' op source and destination must have the same type}}
  pk.comm.all_reduce <sum> <ldst> %x[%i] into %y {shape = array<i64: 64>} : !pk.sym<?xbf16>, !pk.sym<?xf32>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.all_reduce' op needs one index and one tile extent per tensor dimension}}
  pk.comm.all_reduce <sum> <ldst> %x[%i] into %x {shape = array<i64: 64, 2>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.all_reduce' op tile extents must be positive}}
  pk.comm.all_reduce <sum> <ldst> %x[%i] into %x {shape = array<i64: 0>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.load_peer' op TMA loads land in shared memory; declare the tile as smem}}
  %t = pk.comm.load_peer <tma> %x[%i] on %i : !pk.sym<?xbf16> -> !pk.tile<64xbf16>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.sym<?xbf16>, %i: index) {
  // expected-error @+1 {{'pk.comm.load_peer' op loads a tile with tma or ldst only}}
  %t = pk.comm.load_peer <multimem> %x[%i] on %i : !pk.sym<?xbf16> -> !pk.tile<64xbf16>
  pk.return
}

// -----

pk.kernel @k() {
  // expected-error @+1 {{'pk.sync.flag' op flag slot must be in [0, 1024), got 1024}}
  %f = pk.sync.flag 1024 <block> : !pk.flag
  pk.return
}

// -----

pk.kernel @k(%n: index) {
  %ok = arith.cmpi eq, %n, %n : index
  // expected-error @+1 {{'pk.check' op needs a message saying what the check requires}}
  pk.check %ok, "" expected %n got %n
  pk.return
}

// -----

// expected-error @+1 {{argument #0 is marked pk.scratch but is not a symmetric tensor (!pk.sym)}}
pk.kernel @k(%a: !pk.tensor<?xf32> {pk.scratch}) {
  pk.return
}

// -----

// expected-error @+1 {{argument #0: pk.scratch takes no value}}
pk.kernel @k(%a: !pk.sym<?xf32> {pk.scratch = 1}) {
  pk.return
}

// -----

pk.kernel @k(%i: index) {
  %t = pk.tile.zeros : !pk.tile<64x64xf32>
  %m = pk.tile.zeros : !pk.tile<64x1xf32>
  // expected-error @+1 {{'pk.tile.select' op the mask must have the result's shape}}
  %r = pk.tile.select %m, %t, %t : !pk.tile<64x1xf32>, !pk.tile<64x64xf32>
  pk.return
}

// -----

pk.kernel @k(%i: index) {
  // expected-error @+1 {{'pk.tile.iota' op dimension 2 is not one of the tile's 2}}
  %r = pk.tile.iota %i dim 2 : !pk.tile<64x64xf32>
  pk.return
}

// -----

// A kernel name the emitted CUDA cannot use (found by test/Fuzz/mutants.test).
// expected-error @+1 {{kernel name 'pk.sym' is not usable as a CUDA function name}}
pk.kernel @pk.sym(%x: !pk.sym<?xbf16>) {
  pk.return
}

// -----

// expected-error @+1 {{kernel name 'class' is not usable as a CUDA function name}}
pk.kernel @class() {
  pk.return
}

// -----

// A C-linkage function of CUDA's math API (a kernel named norm failed only in NVRTC; found by
// test/Fuzz/mutants.test).
// expected-error @+1 {{kernel name 'norm' is not usable as a CUDA function name}}
pk.kernel @norm() {
  pk.return
}

// -----

// expected-error @+1 {{kernel name 'rnorm3df' is not usable as a CUDA function name}}
pk.kernel @rnorm3df() {
  pk.return
}

// -----

// expected-error @+1 {{kernel name '1k' is not usable as a CUDA function name}}
pk.kernel @"1k"() {
  pk.return
}

// -----

pk.kernel @exp_of_int(%x: !pk.tensor<?xi32>) {
  %c0 = arith.constant 0 : index
  %t = pk.tile.load %x[%c0] : !pk.tensor<?xi32> -> !pk.tile<256xi32>
  // expected-error @+1 {{'exp' takes float tiles, got '!pk.tile<256xi32>'; cast to f32 first}}
  %e = pk.tile.map <exp> %t : !pk.tile<256xi32> -> !pk.tile<256xi32>
  pk.return
}

// -----

pk.kernel @rem_of_float(%x: !pk.tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = pk.tile.load %x[%c0] : !pk.tensor<?xf32> -> !pk.tile<256xf32>
  // expected-error @+1 {{'rem' takes integer tiles, got '!pk.tile<256xf32>'}}
  %e = pk.tile.map <rem> %t, %t : !pk.tile<256xf32>, !pk.tile<256xf32> -> !pk.tile<256xf32>
  pk.return
}

// -----

pk.kernel @shift_of_float(%x: !pk.tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = pk.tile.load %x[%c0] : !pk.tensor<?xf32> -> !pk.tile<256xf32>
  // expected-error @+1 {{'shl' takes integer tiles, got '!pk.tile<256xf32>'}}
  %e = pk.tile.map <shl> %t, %t : !pk.tile<256xf32>, !pk.tile<256xf32> -> !pk.tile<256xf32>
  pk.return
}

// -----

pk.kernel @hash_of_float(%x: !pk.tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = pk.tile.load %x[%c0] : !pk.tensor<?xf32> -> !pk.tile<256xf32>
  // expected-error @+1 {{'hash' takes integer tiles, got '!pk.tile<256xf32>'}}
  %e = pk.tile.map <hash> %t, %t : !pk.tile<256xf32>, !pk.tile<256xf32> -> !pk.tile<256xf32>
  pk.return
}

// -----

pk.kernel @row_sum_of_i8(%x: !pk.tensor<?x?xi8>) {
  %c0 = arith.constant 0 : index
  %t = pk.tile.load %x[%c0, %c0] : !pk.tensor<?x?xi8> -> !pk.tile<4x256xi8>
  // expected-error @+1 {{reduces float, i32 or i64 tiles, got '!pk.tile<4x256xi8>'; cast to i32 first}}
  %s = pk.tile.reduce_rows <sum> %t : !pk.tile<4x256xi8> -> !pk.tile<4x1xi8>
  pk.return
}

// -----

pk.kernel @float_fills_int() {
  %f = arith.constant 0.5 : f32
  // expected-error @+1 {{a float scalar cannot fill an integer tile; cast the tile to f32 first}}
  %t = pk.tile.splat %f : f32 -> !pk.tile<256xi32>
  pk.return
}

// -----

pk.kernel @float_row_indices(%x: !pk.tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %i = pk.tile.zeros : !pk.tile<16xf32>
  // expected-error @+1 {{row indices must be an i32 or i64 tile, got '!pk.tile<16xf32>'}}
  %r = pk.tile.load_rows %x[%i, %c0] : !pk.tensor<?x?xf32>, !pk.tile<16xf32> -> !pk.tile<16x64xf32>
  pk.return
}

// -----

pk.kernel @row_count(%x: !pk.tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %i = pk.tile.zeros : !pk.tile<8xi32>
  %t = pk.tile.zeros : !pk.tile<16x64xf32>
  // expected-error @+1 {{row indices must be a register tile of 16 (or 16x1), one per tile row; got '!pk.tile<8xi32>'}}
  pk.tile.store_rows %t, %x[%i, %c0] : !pk.tile<16x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<8xi32>
  pk.return
}

// -----

pk.kernel @rows_of_1d(%x: !pk.tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %i = pk.tile.zeros : !pk.tile<16xi32>
  // expected-error @+1 {{moves rows of 2-D tensors, got '!pk.tensor<?xf32>'}}
  %r = pk.tile.load_rows %x[%i, %c0] : !pk.tensor<?xf32>, !pk.tile<16xi32> -> !pk.tile<16x64xf32>
  pk.return
}

// -----

pk.kernel @rows_of_local_peer(%x: !pk.tensor<?x?xf32>, %p: index) {
  %c0 = arith.constant 0 : index
  %i = pk.tile.zeros : !pk.tile<16xi32>
  // expected-error @+1 {{moves rows of a peer's copy, which only a symmetric tensor has; got '!pk.tensor<?x?xf32>'}}
  %r = pk.tile.load_rows %x[%i, %c0] on %p : !pk.tensor<?x?xf32>, !pk.tile<16xi32> -> !pk.tile<16x64xf32>
  pk.return
}

// -----

pk.kernel @claim_float_counter(%c: !pk.tensor<?xf32>) {
  %i = pk.tile.zeros : !pk.tile<16xi32>
  // expected-error @+1 {{counts in a 1-D i32 or i64 tensor, got '!pk.tensor<?xf32>'}}
  %s = pk.tile.claim %c[%i] : !pk.tensor<?xf32>, !pk.tile<16xi32> -> !pk.tile<16xi32>
  pk.return
}

// -----

pk.kernel @claim_float_index(%c: !pk.tensor<?xi32>) {
  %i = pk.tile.zeros : !pk.tile<16xf32>
  // expected-error @+1 {{the index must be an integer register tile, got '!pk.tile<16xf32>'}}
  %s = pk.tile.claim %c[%i] : !pk.tensor<?xi32>, !pk.tile<16xf32> -> !pk.tile<16xi32>
  pk.return
}

// -----

pk.kernel @claim_result(%c: !pk.tensor<?xi32>) {
  %i = pk.tile.zeros : !pk.tile<16xi32>
  // expected-error @+1 {{the result must be a register tile of the index's shape and the counter's element type, got '!pk.tile<16xi64>'}}
  %s = pk.tile.claim %c[%i] : !pk.tensor<?xi32>, !pk.tile<16xi32> -> !pk.tile<16xi64>
  pk.return
}

// -----

pk.kernel @reshape_extents() {
  %t = pk.tile.zeros : !pk.tile<16x32xf32>
  // expected-error @+1 {{only adds or drops unit dimensions of a register tile, keeping its element type; got '!pk.tile<16x32xf32>' -> '!pk.tile<32x16xf32>'}}
  %u = pk.tile.reshape %t : !pk.tile<16x32xf32> -> !pk.tile<32x16xf32>
  pk.return
}

// -----

pk.kernel @transpose_shape() {
  %t = pk.tile.zeros : !pk.tile<16x32xf32>
  // expected-error @+1 {{the result must be the 32x16 register tile of the input's element type, got '!pk.tile<16x32xf32>'}}
  %u = pk.tile.transpose %t : !pk.tile<16x32xf32> -> !pk.tile<16x32xf32>
  pk.return
}

// -----

pk.kernel @histogram_of_float() {
  %t = pk.tile.zeros : !pk.tile<256xf32>
  // expected-error @+1 {{counts the values of an integer register tile, got '!pk.tile<256xf32>'}}
  %h = pk.tile.histogram %t : !pk.tile<256xf32> -> !pk.tile<64xi32>
  pk.return
}

// -----


pk.kernel @scalar_type(%x: !pk.tensor<?xi32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{reads an integer element as an index and a float one as f32; got 'i32' -> 'f32'}}
  %s = pk.load_scalar %x[%c0] : !pk.tensor<?xi32> -> f32
  pk.return
}

// -----

pk.kernel @fp8_sum(%x: !pk.sym<?xf8E4M3FN>, %y: !pk.tensor<?xf8E4M3FN>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op reductions support bf16, f16, f32, i32 and i64, got 'f8E4M3FN'; fp8 values do not add}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xf8E4M3FN>, !pk.tensor<?xf8E4M3FN>
  pk.return
}

// -----

pk.kernel @i8_sum(%x: !pk.sym<?xi8>, %y: !pk.tensor<?xi8>) {
  // expected-error @+1 {{'pk.coll.all_reduce' op reductions support bf16, f16, f32, i32 and i64, got 'i8'; i8 values would wrap at 8 bits}}
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xi8>, !pk.tensor<?xi8>
  pk.return
}

// -----

pk.kernel @i8_mma(%x: !pk.tensor<?x?xi8>) {
  %a = pk.tile.zeros : !pk.tile<16x16xi8>
  %c = pk.tile.zeros : !pk.tile<16x16xf32>
  // expected-error @+1 {{'pk.tile.mma' op i8 operands accumulate into an i32 register tile, got 'f32'}}
  %d = pk.tile.mma %a, %a, %c : !pk.tile<16x16xi8>, !pk.tile<16x16xi8>, !pk.tile<16x16xf32>
  pk.return
}

// -----

pk.kernel @i8_bf16_mma(%x: !pk.tensor<?x?xi8>) {
  %a = pk.tile.zeros : !pk.tile<16x16xi8>
  %b = pk.tile.zeros : !pk.tile<16x16xbf16>
  %c = pk.tile.zeros : !pk.tile<16x16xf32>
  // expected-error @+1 {{'pk.tile.mma' op a and b must both be bf16, both f16, or both fp8 (e4m3 or e5m2) (or both i8, into an i32 accumulator); i8 tiles multiply as bf16 beside a float tile}}
  %d = pk.tile.mma %a, %b, %c : !pk.tile<16x16xi8>, !pk.tile<16x16xbf16>, !pk.tile<16x16xf32>
  pk.return
}

// -----

pk.kernel @k(%x: !pk.tensor<?x?xf8E4M3FN>, %n: index) {
  %t = pk.tile.zeros : !pk.tile<16x64xf8E4M3FN>
  %r = pk.tile.zeros : !pk.tile<16xi32>
  // expected-error @+1 {{'pk.tile.store_rows' op adds support bf16, f16, f32, i32 and i64, got 'f8E4M3FN'}}
  pk.tile.store_rows %t, %x[%r, %n] {add} : !pk.tile<16x64xf8E4M3FN>, !pk.tensor<?x?xf8E4M3FN>, !pk.tile<16xi32>
  pk.return
}

// -----

pk.kernel @round_int(%x: !pk.tensor<?x?xi8>) {
  %a = pk.tile.zeros : !pk.tile<16x16xi32>
  // expected-error @+1 {{'pk.tile.map' op 'round' takes float tiles, got '!pk.tile<16x16xi32>'; cast to f32 first}}
  %r = pk.tile.map <round> %a : !pk.tile<16x16xi32> -> !pk.tile<16x16xi32>
  pk.return
}
