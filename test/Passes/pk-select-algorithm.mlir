// RUN: pkc-opt %s -pk-select-algorithm="world-size=4 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=W4
// RUN: pkc-opt %s -pk-select-algorithm="world-size=2 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=W2
// RUN: pkc-opt %s -pk-select-algorithm=profile=%S/Inputs/crossover.profile -split-input-file | FileCheck %s --check-prefix=DYN
// RUN: pkc-opt %s -pk-select-algorithm="push-max-bytes=0 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: pkc-opt %s -pk-select-algorithm="ll-max-bytes=0 profile=%S/Inputs/crossover.profile" -split-input-file | FileCheck %s --check-prefix=NOLL
// Both sides of every threshold of pk-select-algorithm with the built-in H200 profile:
// two-shot from (W-1)(W-2)/W x bytes >= 832 ns x 369 GB/s = 307008 bytes (W=4: 204672 bytes),
// and one block per 32 KiB tile up to 132 blocks.

// Tests that 204672 bytes at world 4 are the first size that picks two-shot.
// W4-LABEL: pk.kernel @two_shot_at_threshold
// W4: pk.coll.all_reduce {{.*}}algorithm = #pk.algorithm<two_shot>
// W2-LABEL: pk.kernel @two_shot_at_threshold
// W2: pk.coll.all_reduce {{.*}}algorithm = #pk.algorithm<one_shot>
// DYN-LABEL: pk.kernel @two_shot_at_threshold
// DYN: pk.coll.all_reduce {{.*}}pk.two_shot_min_bytes = 307008
pk.kernel @two_shot_at_threshold(%x: !pk.sym<102336xbf16>, %y: !pk.sym<102336xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<102336xbf16>, !pk.sym<102336xbf16>
  pk.return
}

// -----

// Tests that one element less stays one-shot at world 4.
// W4-LABEL: pk.kernel @one_shot_below_threshold
// W4: pk.coll.all_reduce {{.*}}algorithm = #pk.algorithm<one_shot>
// W4-SAME: pk.blocks = 7 : i64
pk.kernel @one_shot_below_threshold(%x: !pk.sym<102335xbf16>, %y: !pk.sym<102335xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<102335xbf16>, !pk.sym<102335xbf16>
  pk.return
}

// -----

// Tests that a local output keeps one-shot whatever the size: two-shot writes into peers.
// W4-LABEL: pk.kernel @local_output
// W4-SAME: pk.decisions = [{{.*}}this output is not symmetric
// W4: pk.coll.all_reduce {{.*}}algorithm = #pk.algorithm<one_shot>
pk.kernel @local_output(%x: !pk.sym<16777216xf32>, %y: !pk.tensor<16777216xf32>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<16777216xf32>, !pk.tensor<16777216xf32>
  pk.return
}

// -----

// Tests that 131 tiles of 32 KiB get 131 blocks and 133 tiles the 132-block cap.
// W4-LABEL: pk.kernel @blocks
// W4-SAME: pk.decisions = [{{.*}}131 blocks: 4.09375 MiB is 131 tile(s) of 32 KiB{{.*}}132 blocks: the profiled SM count with the best large-message ld/st bandwidth (369 of 369 GB/s)
// W4: pk.coll.all_gather {{.*}}pk.blocks = 131 : i64, {{.*}}pk.tile = 16384 : i64
// W4: pk.coll.all_gather {{.*}}pk.blocks = 132 : i64, {{.*}}pk.tile = 8192 : i64
pk.kernel @blocks(%a: !pk.sym<2146304xbf16>, %b: !pk.sym<4292608xbf16>,
                  %c: !pk.sym<1089536xf32>, %d: !pk.sym<2179072xf32>) {
  pk.coll.all_gather %a into %b : !pk.sym<2146304xbf16>, !pk.sym<4292608xbf16>
  pk.coll.all_gather %c into %d : !pk.sym<1089536xf32>, !pk.sym<2179072xf32>
  pk.return
}

// -----

// Tests that a run-time size keeps the algorithm open with a threshold, and takes all blocks.
// DYN-LABEL: pk.kernel @dynamic
// DYN-SAME: pk.decisions = [{{.*}}both, chosen at run time: two_shot when (W-1)(W-2)/W x bytes >= 307008
// DYN-NOT: algorithm =
// DYN: pk.coll.all_reduce <sum> %{{.*}} into %{{.*}} {pk.blocks = 132 : i64, pk.ll_max_bytes = 262144 : i64, pk.push_max_bytes = 1048576 : i64, pk.tile = 16384 : i64, pk.two_shot_min_bytes = 307008 : i64}
pk.kernel @dynamic(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}

// -----

// Tests that the non-reducing collectives are direct reads and record why.
// DYN-LABEL: pk.kernel @direct
// DYN-SAME: pk.decisions = [{{.*}}rule 1 (algorithm): pk.coll.broadcast at {{.*}}direct: every rank reads
pk.kernel @direct(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %r: index) {
  pk.coll.broadcast %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

// Tests both sides of the one-round push cut-off (1 MiB per peer): an all-reduce of exactly
// 1 MiB keeps it, 16 bytes more rules it out; an all-to-all's per-peer block is 1/W of its
// input (W = 4 here); a run-time size keeps it open; push-max-bytes=0 turns it off.
// W4-LABEL: pk.kernel @push_cutoff
// W4-SAME: rule 1 (small messages): pk.coll.all_reduce at {{[^"]*}}one round when a peer's message is at most 1 MiB
// W4-SAME: rule 1 (small messages): pk.coll.all_reduce at {{[^"]*}}off: 1.00002 MiB per peer is above 1 MiB
// W4: pk.coll.all_reduce {{.*}}pk.push_max_bytes = 1048576
// W4: pk.coll.all_reduce {{.*}}pk.push_max_bytes = 0
// W4: pk.coll.all_to_all {{.*}}pk.push_max_bytes = 1048576
// W4: pk.coll.all_to_all {{.*}}pk.push_max_bytes = 0
// OFF-LABEL: pk.kernel @push_cutoff
// OFF-SAME: off (push-max-bytes=0)
// OFF-COUNT-4: pk.push_max_bytes = 0
pk.kernel @push_cutoff(%a: !pk.sym<524288xbf16>, %b: !pk.sym<524288xbf16>,
                       %c: !pk.sym<524296xbf16>, %d: !pk.sym<524296xbf16>,
                       %e: !pk.sym<2097152xbf16>, %f: !pk.sym<2097152xbf16>,
                       %g: !pk.sym<2097216xbf16>, %h: !pk.sym<2097216xbf16>) {
  pk.coll.all_reduce <sum> %a into %b : !pk.sym<524288xbf16>, !pk.sym<524288xbf16>
  pk.coll.all_reduce <sum> %c into %d : !pk.sym<524296xbf16>, !pk.sym<524296xbf16>
  pk.coll.all_to_all %e into %f : !pk.sym<2097152xbf16>, !pk.sym<2097152xbf16>
  pk.coll.all_to_all %g into %h : !pk.sym<2097216xbf16>, !pk.sym<2097216xbf16>
  pk.return
}

// -----

// Tests both sides of the LL cut-off (256 KiB per peer): an all-reduce of exactly 256 KiB
// keeps the LL path, 16 bytes more rules it out (the flag path stays); ll-max-bytes=0 and
// push-max-bytes=0 turn it off.
// W2-LABEL: pk.kernel @ll_cutoff
// W2-SAME: rule 1 (LL): pk.coll.all_reduce at {{[^"]*}}LL words when a peer's message is at most 256 KiB
// W2-SAME: rule 1 (LL): pk.coll.all_reduce at {{[^"]*}}off: 256.016 KiB per peer is above 256 KiB
// W2: pk.coll.all_reduce {{.*}}pk.ll_max_bytes = 262144 : i64, pk.push_max_bytes = 1048576
// W2: pk.coll.all_reduce {{.*}}pk.ll_max_bytes = 0 : i64, pk.push_max_bytes = 1048576
// NOLL-LABEL: pk.kernel @ll_cutoff
// NOLL-SAME: off (ll-max-bytes=0): small messages take the flag round
// NOLL-COUNT-2: pk.ll_max_bytes = 0 : i64, pk.push_max_bytes = 1048576
// OFF-LABEL: pk.kernel @ll_cutoff
// OFF-SAME: rule 1 (LL): pk.coll.all_reduce at {{[^"]*}}off: the one-round path is off
// OFF-COUNT-2: pk.ll_max_bytes = 0 : i64, pk.push_max_bytes = 0
pk.kernel @ll_cutoff(%a: !pk.sym<131072xbf16>, %b: !pk.sym<131072xbf16>,
                     %c: !pk.sym<131080xbf16>, %d: !pk.sym<131080xbf16>) {
  pk.coll.all_reduce <sum> %a into %b : !pk.sym<131072xbf16>, !pk.sym<131072xbf16>
  pk.coll.all_reduce <sum> %c into %d : !pk.sym<131080xbf16>, !pk.sym<131080xbf16>
  pk.return
}
