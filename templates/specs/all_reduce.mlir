// All-reduce (sum) of a symmetric bf16 vector of any length over any number of ranks:
// after the kernel, y on every rank holds the element-wise reduction of x over all ranks.
// y is symmetric so that pkc may pick two-shot (ranks write reduced shards into each other's y).
pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}
