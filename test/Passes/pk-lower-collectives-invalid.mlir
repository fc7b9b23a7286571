// RUN: pkc-opt %s -pk-lower-collectives -split-input-file -verify-diagnostics
// Errors of pk-lower-collectives: unresolved choices and shapes it cannot lower.

pk.kernel @unresolved(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %r: index) {
  // expected-error @+1 {{transport is still 'auto'; run pk-select-transport first}}
  pk.coll.broadcast %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

pk.kernel @no_threshold(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  // expected-error @+1 {{algorithm is still 'auto' without a threshold; run pk-select-algorithm first}}
  pk.coll.all_reduce <sum> %x into %y {transport = #pk.transport<ldst>} : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}
