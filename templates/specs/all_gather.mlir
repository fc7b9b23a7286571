// All-gather of a bf16 vector of any length n: y (W*n) on every rank holds every rank's x,
// rank r's at [r*n, (r+1)*n).
pk.kernel @all_gather(%x: !pk.sym<?xbf16>, %y: !pk.sym<?xbf16>) {
  pk.coll.all_gather %x into %y : !pk.sym<?xbf16>, !pk.sym<?xbf16>
  pk.return
}
