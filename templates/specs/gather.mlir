// Gather: y (W*n) on rank `root` holds every rank's x (n), rank r's at [r*n, (r+1)*n).
pk.kernel @gather(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  pk.coll.gather %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
