// Gather: y (W*n) on rank `root` holds every rank's x (n), rank r's at [r*n, (r+1)*n).
pk.kernel @gather(%x: !pk.sym<?xf16>, %y: !pk.tensor<?xf16>, %root: index) {
  pk.coll.gather %x into %y root %root : !pk.sym<?xf16>, !pk.tensor<?xf16>
  pk.return
}
