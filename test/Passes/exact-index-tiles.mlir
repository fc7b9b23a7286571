// pk-exact-index-tiles: row / column coordinates (f32 iotas, exact below 2^24) used as integers
// on the general path are computed as integers: a cast to i32 becomes an i32 iota, and a
// comparison with an integer scalar is made in i64 and cast back to an f32 mask. Comparisons
// with a float and iotas in arithmetic stay as written.
// RUN: pkc-opt %s --pk-exact-index-tiles | FileCheck %s

// CHECK-LABEL: pk.kernel @positions
// CHECK: pk.tile.foreach
// CHECK-NOT: pk.tile.cast {{.*}}xf32> to !pk.tile<64x1xi32>
// CHECK: %[[ROWS:.*]] = pk.tile.iota %{{.*}} dim 0 : !pk.tile<64x1xi32>
// CHECK: %[[C:.*]] = pk.tile.iota %[[J:.*]] dim 0 : !pk.tile<64x1xi64>
// CHECK: %[[HI:.*]] = pk.tile.splat %{{.*}} : i64 -> !pk.tile<64x1xi64>
// CHECK: %[[LT:.*]] = pk.tile.map <lt> %[[C]], %[[HI]] : {{.*}} -> !pk.tile<64x1xi64>
// CHECK: pk.tile.cast %[[LT]] : !pk.tile<64x1xi64> to !pk.tile<64x1xf32>
// The scalar on the left: the comparison turns around (hi > row is row < hi).
// CHECK: %[[C2:.*]] = pk.tile.iota %{{.*}} dim 1 : !pk.tile<1x64xi64>
// CHECK: pk.tile.map <lt> %[[C2]], %{{.*}} : {{.*}} -> !pk.tile<1x64xi64>
// A float bound stays an f32 comparison:
// CHECK: pk.tile.map <lt> %{{.*}}, %{{.*}} : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
// CHECK: pk.tile.store_rows
module {
  pk.kernel @positions(%a: !pk.tensor<?x?xf32>, %y: !pk.tensor<?x?xf32>, %hi: index, %t: f32) {
    %n = pk.dim %a, 0 : !pk.tensor<?x?xf32>
    pk.tile.foreach (%j) to (%n) step [64] {
      %r = pk.tile.iota %j dim 0 : !pk.tile<64x1xf32>
      %p = pk.tile.cast %r : !pk.tile<64x1xf32> to !pk.tile<64x1xi32>
      %h = arith.index_cast %hi : index to i64
      %hf = arith.sitofp %h : i64 to f32
      %hs = pk.tile.splat %hf : f32 -> !pk.tile<64x1xf32>
      %m = pk.tile.map <lt> %r, %hs : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %c = pk.tile.iota %j dim 1 : !pk.tile<1x64xf32>
      %hs2 = pk.tile.splat %hf : f32 -> !pk.tile<1x64xf32>
      %m2 = pk.tile.map <gt> %hs2, %c : !pk.tile<1x64xf32>, !pk.tile<1x64xf32> -> !pk.tile<1x64xf32>
      %ts = pk.tile.splat %t : f32 -> !pk.tile<64x1xf32>
      %m3 = pk.tile.map <lt> %r, %ts : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %mm = pk.tile.map <mul> %m, %m3 : !pk.tile<64x1xf32>, !pk.tile<64x1xf32> -> !pk.tile<64x1xf32>
      %b = pk.tile.map <mul> %mm, %m2 : !pk.tile<64x1xf32>, !pk.tile<1x64xf32> -> !pk.tile<64x64xf32>
      %c0 = arith.constant 0 : index
      pk.tile.store_rows %b, %y[%p, %c0] : !pk.tile<64x64xf32>, !pk.tensor<?x?xf32>, !pk.tile<64x1xi32>
    }
    pk.return
  }
}

// Behind a reshape or a transpose (which only move the elements: a 1-D row of positions, a
// transposed row of ids) the coordinates are built as integers too, and moved alike (set 35,
// finding 1: positions past 2^24 were rounded through the f32 iota).
// CHECK-LABEL: pk.kernel @moved_positions
// CHECK: %[[I:.*]] = pk.tile.iota %{{.*}} dim 1 : !pk.tile<1x1024xi32>
// CHECK: %[[R:.*]] = pk.tile.reshape %[[I]] : !pk.tile<1x1024xi32> -> !pk.tile<1024xi32>
// CHECK: pk.tile.store %[[R]]
// CHECK: %[[I2:.*]] = pk.tile.iota %{{.*}} dim 1 : !pk.tile<1x16xi64>
// CHECK: %[[T:.*]] = pk.tile.transpose %[[I2]] : !pk.tile<1x16xi64> -> !pk.tile<16x1xi64>
// CHECK: pk.tile.load_rows %{{.*}}[%[[T]]
// CHECK: %[[I3:.*]] = pk.tile.iota %{{.*}} dim 1 : !pk.tile<1x1024xi64>
// CHECK: %[[R3:.*]] = pk.tile.reshape %[[I3]] : !pk.tile<1x1024xi64> -> !pk.tile<1024xi64>
// CHECK: pk.tile.map <lt> %[[R3]], %{{.*}} : !pk.tile<1024xi64>, !pk.tile<1024xi64> -> !pk.tile<1024xi64>
// CHECK-NOT: xf32> to !pk.tile<{{.*}}xi
module {
  pk.kernel @moved_positions(%y: !pk.tensor<?xi32>, %table: !pk.tensor<?x?xf32>, %out: !pk.tensor<?x?xf32>, %z: !pk.tensor<?xf32>, %hi: index) {
    %n = pk.dim %y, 0 : !pk.tensor<?xi32>
    pk.tile.foreach (%i) to (%n) step [1024] {
      %c = pk.tile.iota %i dim 1 : !pk.tile<1x1024xf32>
      %r = pk.tile.reshape %c : !pk.tile<1x1024xf32> -> !pk.tile<1024xf32>
      %p = pk.tile.cast %r : !pk.tile<1024xf32> to !pk.tile<1024xi32>
      pk.tile.store %p, %y[%i] : !pk.tile<1024xi32>, !pk.tensor<?xi32>
    }
    %m = pk.dim %out, 0 : !pk.tensor<?x?xf32>
    pk.tile.foreach (%t) to (%m) step [16] {
      %c = pk.tile.iota %t dim 1 : !pk.tile<1x16xf32>
      %tr = pk.tile.transpose %c : !pk.tile<1x16xf32> -> !pk.tile<16x1xf32>
      %ids = pk.tile.cast %tr : !pk.tile<16x1xf32> to !pk.tile<16x1xi64>
      %c0 = arith.constant 0 : index
      %rows = pk.tile.load_rows %table[%ids, %c0] : !pk.tensor<?x?xf32>, !pk.tile<16x1xi64> -> !pk.tile<16x256xf32>
      pk.tile.store %rows, %out[%t, %c0] : !pk.tile<16x256xf32>, !pk.tensor<?x?xf32>
    }
    %k = pk.dim %z, 0 : !pk.tensor<?xf32>
    pk.tile.foreach (%i) to (%k) step [1024] {
      %c = pk.tile.iota %i dim 1 : !pk.tile<1x1024xf32>
      %r = pk.tile.reshape %c : !pk.tile<1x1024xf32> -> !pk.tile<1024xf32>
      %h = arith.index_cast %hi : index to i64
      %hf = arith.sitofp %h : i64 to f32
      %hs = pk.tile.splat %hf : f32 -> !pk.tile<1024xf32>
      %keep = pk.tile.map <lt> %r, %hs : !pk.tile<1024xf32>, !pk.tile<1024xf32> -> !pk.tile<1024xf32>
      pk.tile.store %keep, %z[%i] : !pk.tile<1024xf32>, !pk.tensor<?xf32>
    }
    pk.return
  }
}
