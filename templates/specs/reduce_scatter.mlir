// Reduce-scatter (sum): x has W*n elements on every rank; rank r's y (n) receives the
// reduction over ranks of x[r*n, (r+1)*n).
pk.kernel @reduce_scatter(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>) {
  pk.coll.reduce_scatter <sum> %x into %y : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
