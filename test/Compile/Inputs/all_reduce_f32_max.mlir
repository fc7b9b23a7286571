// All-reduce (sum) of a symmetric f32 vector of any length over any number of ranks:
// after the kernel, y on every rank holds the element-wise reduction of x over all ranks.
// y is symmetric so that pkc may pick two-shot (ranks write reduced shards into each other's y).
pk.kernel @all_reduce(%x: !pk.sym<?xf32>, %y: !pk.sym<?xf32>) {
  pk.coll.all_reduce <max> %x into %y : !pk.sym<?xf32>, !pk.sym<?xf32>
  pk.return
}
