// RUN: pkc-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the rooted collectives and the copy / reduce_into primitives.

pk.kernel @reduce_f64(%x: !pk.sym<?xf64>, %y: !pk.tensor<?xf64>, %r: index) {
  // expected-error @+1 {{reductions support bf16, f16, f32, i32 and i64}}
  pk.coll.reduce <sum> %x into %y root %r : !pk.sym<?xf64>, !pk.tensor<?xf64>
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

// -----

pk.kernel @push_small_no_kind(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{a reducing collective needs a reduction kind}}
  %t = pk.comm.push_small <all_reduce> %x, %y flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_kind(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{only reducing collectives take a reduction kind}}
  %t = pk.comm.push_small <all_gather> reduce <sum> %x, %y flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_no_root(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{a rooted collective needs a root}}
  %t = pk.comm.push_small <broadcast> %x, %y flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_root(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>, %r: index) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{only rooted collectives take a root}}
  %t = pk.comm.push_small <all_to_all> %x, %y root %r flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_types(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf16>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{input and output element types differ}}
  %t = pk.comm.push_small <all_gather> %x, %y flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf16>
  pk.return
}

// -----

pk.kernel @push_small_f64(%x: !pk.sym<?xf64>, %y: !pk.tensor<?xf64>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{reductions support bf16, f16, f32, i32 and i64}}
  %t = pk.comm.push_small <all_reduce> reduce <sum> %x, %y flags(%a, %a, %a) max 16 ll 16 : !pk.sym<?xf64>, !pk.tensor<?xf64>
  pk.return
}

// -----

pk.kernel @push_small_grid(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{flags must be <block> flags}}
  %t = pk.comm.push_small <all_gather> %x, %y flags(%a, %g, %a) max 16 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_max(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  %g = pk.sync.flag 1 <grid> : !pk.flag
  // expected-error @+1 {{max_bytes must not be negative}}
  %t = pk.comm.push_small <all_gather> %x, %y flags(%a, %a, %a) max -1 ll 16 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}

// -----

pk.kernel @push_small_ll_max(%x: !pk.sym<?xf32>, %y: !pk.tensor<?xf32>) {
  %a = pk.sync.flag 0 <block> : !pk.flag
  // expected-error @+1 {{ll_max_bytes must not be negative}}
  %t = pk.comm.push_small <all_gather> %x, %y flags(%a, %a, %a) max 16 ll -1 : !pk.sym<?xf32>, !pk.tensor<?xf32>
  pk.return
}
