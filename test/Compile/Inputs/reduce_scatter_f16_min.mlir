// Reduce-scatter (sum): x has W*n elements on every rank; rank r's y (n) receives the
// reduction over ranks of x[r*n, (r+1)*n).
pk.kernel @reduce_scatter(%x: !pk.sym<?xf16>, %y: !pk.tensor<?xf16>) {
  pk.coll.reduce_scatter <min> %x into %y : !pk.sym<?xf16>, !pk.tensor<?xf16>
  pk.return
}
