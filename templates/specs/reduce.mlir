// Reduce (sum) to a root: y on rank `root` holds the element-wise reduction of x over all
// ranks; other ranks' y is left untouched.
pk.kernel @reduce(%x: !pk.sym<?xbf16>, %y: !pk.tensor<?xbf16>, %root: index) {
  pk.coll.reduce <sum> %x into %y root %root : !pk.sym<?xbf16>, !pk.tensor<?xbf16>
  pk.return
}
