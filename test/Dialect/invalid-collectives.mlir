// RUN: pkc-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the rooted collectives and the copy / reduce_into primitives.

pk.kernel @reduce_int(%x: !pk.sym<?xi32>, %y: !pk.tensor<?xi32>, %r: index) {
  // expected-error @+1 {{reductions support bf16, f16 and f32}}
  pk.coll.reduce <sum> %x into %y root %r : !pk.sym<?xi32>, !pk.tensor<?xi32>
  pk.return
}

// -----

pk.kernel @broadcast_types(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xf32>, %r: index) {
  // expected-error @+1 {{input and output element types differ}}
  pk.coll.broadcast %x into %y root %r : !pk.sym<?xbf16>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @reduce_tma(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %r: index) {
  // expected-error @+1 {{cannot reduce while reading}}
  pk.coll.reduce <sum> %x into %y root %r {transport = #pk.transport<tma>} : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}

// -----

pk.kernel @copy_local_on_rank(%x: !pk.tensor<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{source is a local tensor and cannot be addressed on another rank}}
  pk.comm.copy <ldst> %x[%i] on %i into %y[%i] count %i : !pk.tensor<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @copy_sym_no_rank(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{source is symmetric: name the rank with 'on'}}
  pk.comm.copy <ldst> %x[%i] into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @copy_types(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xbf16>, %i: index) {
  // expected-error @+1 {{source and destination element types differ}}
  pk.comm.copy <ldst> %x[%i] on %i into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xbf16>
  pk.return
}

// -----

pk.kernel @copy_tma(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{copies with transport ldst only for now}}
  pk.comm.copy <tma> %x[%i] on %i into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @copy_2d(%x: !pk.sym<?x?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{source must be 1-D; flatten the tensor}}
  pk.comm.copy <ldst> %x[%i] on %i into %y[%i] count %i : !pk.sym<?x?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @reduce_into_auto(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{needs a concrete transport}}
  pk.comm.reduce_into <sum> <auto> %x[%i] into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @reduce_into_multimem(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{reduces into a tensor with transport ldst only for now}}
  pk.comm.reduce_into <sum> <multimem> %x[%i] into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @reduce_into_local_rank(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %i: index) {
  // expected-error @+1 {{destination is a local tensor and cannot be addressed on another rank}}
  pk.comm.reduce_into <sum> <ldst> %x[%i] into %y[%i] on %i count %i : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @reduce_into_types(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf16>, %i: index) {
  // expected-error @+1 {{source and destination element types differ}}
  pk.comm.reduce_into <sum> <ldst> %x[%i] into %y[%i] count %i : !pk.sym<?xf32>, !pk.tensor<?xf16>
  pk.return
}
