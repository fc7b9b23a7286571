// Scatter: x (W*n) on rank `root`; rank r's y (n) receives x[r*n, (r+1)*n) of the root.
pk.kernel @scatter(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  pk.coll.scatter %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
