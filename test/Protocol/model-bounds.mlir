// RUN: pkc-opt --pk-verify-protocol -split-input-file -verify-diagnostics %s
// Tests that a tile loop the modelled sizes blow up (here 2^20 one-element tiles per block)
// is reported unverified, as a warning, instead of keeping the checker busy.

pk.kernel @huge(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  pk.worker <communicator> blocks 1 {
    %a = pk.sync.flag 0 <block> : !pk.flag
    %w = pk.world_size
    %c1 = arith.constant 1 : index
    %peers = arith.subi %w, %c1 : index
    %n = arith.constant 1048576 : index
    pk.sync.signal_all %a
    pk.sync.wait %a, %peers
    // expected-warning @+1 {{protocol not verified: the tile loop runs more than 65536 tiles per block at the modelled sizes}}
    pk.tile.foreach (%i) to (%n) step [1] {
      pk.comm.copy <ldst> %x[%i] on %c1 into %y[%i] count %c1 : !pk.sym<?xf32>, !pk.tensor<?xf32>
    }
  }
  pk.return
}
