// All-reduce (sum) of a symmetric bf16 vector of any length over any number of ranks:
// after the kernel, y on every rank holds the element-wise sum of x over all ranks.
pk.kernel @all_reduce(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.coll.all_reduce <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
