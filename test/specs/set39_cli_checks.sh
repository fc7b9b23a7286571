#!/usr/bin/env bash
# Set 39: command-line claims of README.md ("Using pkc", "Specs in C++", "How a collective moves its
# bytes", "GPU safety") and docs/language.md, checked against pkc; plus the refusals of
# user_specs39_probes.pk.cpp (each BAD_kNN kernel compiled alone, its message checked).
# Usage: PKC=/path/to/pkc test/specs/set39_cli_checks.sh   (no GPU needed; at most one pkc at a time)
# Prints one line per check: PASS / FAIL (FAIL = behaviour differs from the docs; see specs39_findings.md).
set -u
cd "$(dirname "$0")/../.."
P=${PKC:-build/bin/pkc}
T=$(mktemp -d /tmp/set39-cli.XXXXXX)
S=test/specs/user_specs39_probes.pk.cpp
pass=0; fail=0
ok()  { echo "PASS  $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi; }

# ---- README.md:42-54 "Using pkc": every emit mode ----
for e in mlir device-mlir cuda launcher launcher-impl; do
  check "README:42-50 --emit=$e" "$P" templates/specs/all_reduce.mlir --emit=$e -o $T/ar.$e
done
check "README:45 --emit=ptx --arch=sm_90a" "$P" templates/specs/all_reduce.mlir --emit=ptx -o $T/ar.ptx --arch=sm_90a
grep -q '.target sm_90a' $T/ar.ptx && ok "README:45 PTX targets sm_90a" || bad "README:45 PTX targets sm_90a"
check "README:46 --emit=cubin (default arch)" "$P" templates/specs/all_reduce.mlir --emit=cubin -o $T/ar.cubin
head -c 4 $T/ar.cubin | grep -q ELF && ok "README:46 cubin is an ELF" || bad "README:46 cubin is an ELF"
# ---- README.md:47 depfile, both spellings ----
"$P" $S --kernel=k01 -o $T/d.cu -MD -MF $T/d.d >/dev/null 2>&1 && grep -q user_specs39_probes $T/d.d && ok "README:47 -MD -MF spec.d" || bad "README:47 -MD -MF spec.d"
"$P" $S --kernel=k01 -o $T/d2.cu --MD --MF=$T/d2.d >/dev/null 2>&1 && grep -q user_specs39_probes $T/d2.d && ok "--MD --MF= (help's spelling)" || bad "--MD --MF="
# ---- README.md:48 standard input ----
"$P" - -o $T/s1.cu < templates/specs/all_reduce.pk.cpp >/dev/null 2>&1 && ok "README:48 stdin C++ (has #include)" || bad "README:48 stdin C++"
"$P" - -o $T/s2.cu < templates/specs/all_reduce.mlir >/dev/null 2>&1 && ok "README:48 stdin MLIR (no #include)" || bad "README:48 stdin MLIR"
"$P" -x=mlir - -o $T/s3.cu < templates/specs/all_reduce.mlir >/dev/null 2>&1 && ok "README:48 -x=mlir" || bad "README:48 -x=mlir"
"$P" -x=c++ - -o $T/s4.cu < templates/specs/all_reduce.pk.cpp >/dev/null 2>&1 && ok "README:48 -x=c++" || bad "README:48 -x=c++"
# ---- README.md:49-50 and :449-465 launchers ----
"$P" templates/specs/all_reduce.mlir --emit=launcher -o $T/l.h >/dev/null 2>&1
grep -q 'pk::Status all_reduce(pk::Context& ctx, pk::SymTensor<pk::bf16> x, pk::SymTensor<pk::bf16> y, cudaStream_t stream);' $T/l.h \
  && ok "README:449 all_reduce launcher signature" || bad "README:449 all_reduce launcher signature"
"$P" templates/specs/gemm_rs.pk.cpp --emit=launcher -o $T/g.h >/dev/null 2>&1
grep -q 'pk::Status gemm_rs(pk::Context& ctx, pk::Tensor<pk::bf16> a, pk::Tensor<pk::bf16> b, pk::SymTensor<pk::bf16> c, cudaStream_t stream);' $T/g.h \
  && ok "README:462 gemm_rs launcher signature" || bad "README:462 gemm_rs launcher signature"
"$P" templates/specs/gemm_rs.pk.cpp -o $T/g.cu >/dev/null 2>&1
grep -q "pk-host-check gemm_rs .*A's rows must split evenly over the ranks: M % world_size (shown) must be 0" $T/g.cu \
  && ok "README:464 gemm_rs host check text" || bad "README:464 gemm_rs host check text"
"$P" templates/specs/all_reduce.mlir -o $T/a.cu >/dev/null 2>&1
grep -q 'pk-host-check all_reduce 0 if=.* expected=.* actual=.* pk.coll.all_reduce: input and output must have the same element count' $T/a.cu \
  && ok "README:337 pk-host-check line format" || bad "README:337 pk-host-check line format"
"$P" templates/specs/all_reduce.mlir --emit=launcher-impl --launcher-namespace=my::ns --launcher-include=foo/bar.h -o $T/li.cpp >/dev/null 2>&1
grep -q '#include "foo/bar.h"' $T/li.cpp && grep -q 'namespace my::ns' $T/li.cpp && ok "--launcher-namespace / --launcher-include" || bad "--launcher-namespace / --launcher-include"
# ---- README.md:51-54 explain, profile, roofline, templates ----
"$P" templates/specs/all_reduce.mlir --explain -o $T/e.cu 2>&1 | grep -q 'rule 1 (algorithm)' && ok "README:51 --explain prints decisions" || bad "README:51 --explain"
check "README:52 --profile=runtime/profiles/h200.profile" "$P" templates/specs/all_reduce.mlir --profile=runtime/profiles/h200.profile -o $T/p.cu
"$P" templates/specs/all_reduce.mlir --profile=/nonexistent.profile -o $T/p2.cu >/dev/null 2>&1 && bad "bad --profile refused" || ok "bad --profile refused"
"$P" templates/specs/gemm.pk.cpp --roofline --shape=0:8192x8192,1:8192x8192,2:8192x8192 2>&1 | grep -q 'bound: compute' && ok "README:53 --roofline" || bad "README:53 --roofline"
"$P" templates/specs/gemm.pk.cpp --roofline=json --shape=0:8192x8192,1:8192x8192,2:8192x8192 2>&1 | grep -q '"binds": "compute"' && ok "README:57 --roofline=json" || bad "README:57 --roofline=json"
"$P" templates/specs/attention_heads.pk.cpp --templates=false --explain -o $T/t.cu >$T/t.log 2>&1; grep -q 'templates are off' $T/t.log && ! grep -q 'pk-template' $T/t.cu \
  && ok "README:54 --templates=false keeps the general path" || bad "README:54 --templates=false"
"$P" templates/specs/gemm.pk.cpp --split-k=false -o $T/sk.cu >/dev/null 2>&1 && grep -q 'pk-template gemm .*grid=balanced(mul(mul(cdiv(dim(0,0),128),cdiv(dim(1,0),256)),1),sms)' $T/sk.cu \
  && ok "language.md:249 --split-k=false: one piece" || bad "language.md:249 --split-k=false"
# ---- README.md:193-201 general-path options ----
for o in --tile-threads=256 --tile-threads=512 --tile-threads=1024 --tile-stages=3 --tile-stages=4 --tile-batch=1 --tile-batch=4; do
  check "README:196-201 $o accepted" "$P" $S --kernel=k29 $o -o $T/o.cu
done
for o in --tile-threads=128 --tile-stages=5 --tile-batch=-1; do
  "$P" $S --kernel=k29 $o -o $T/o.cu >/dev/null 2>&1 && bad "$o refused" || ok "$o refused"
done
"$P" $S --kernel=k29 --tile-stages=3 -o $T/o.cu >/dev/null 2>&1; grep -q 'smem=12288' $T/o.cu && ok "README:200 --tile-stages=3 deepens the ring (k29: 12 KiB)" || bad "--tile-stages=3 deepens the ring"
# finding 5: rms_norm loses its ring at --tile-stages=3 / --tile-threads=256 and --explain says nothing
"$P" $S --kernel=rms_norm --tile-stages=3 --explain -o $T/o.cu 2>$T/o.log >/dev/null; grep -q 'shared-memory ring\|ring' $T/o.log \
  && ok "--tile-stages=3 on rms_norm: --explain says what became of the ring" || bad "--tile-stages=3 on rms_norm: ring silently dropped (finding 5)"
# ---- README.md:368-369 thresholds ----
"$P" templates/specs/all_gather.pk.cpp --copy-engine-min-bytes=1048576 -o $T/ce.cu >/dev/null 2>&1; grep -q 'copy_engine=all_gather:1048576' $T/ce.cu && ok "README:369 --copy-engine-min-bytes" || bad "--copy-engine-min-bytes"
"$P" templates/specs/all_gather.pk.cpp --copy-engine-min-bytes=0 --push-max-bytes=0 --ll-max-bytes=0 --explain -o $T/ce0.cu 2>&1 | grep -q 'off (push-max-bytes=0)' && ok "README:369 --push-max-bytes=0 / --ll-max-bytes=0 turn paths off" || bad "--push-max-bytes=0"
# ---- README.md:630-634 / language.md:480-485 multicast ----
"$P" templates/specs/all_reduce.pk.cpp --allow-multicast --explain -o $T/m.cu 2>&1 | grep -q "lowered as ldst" && ok "README:634 collectives record multicast, lower to pulls" || bad "README:634 multicast"
"$P" $S --kernel=k80 --allow-multicast -o $T/m2.cu >/dev/null 2>&1; grep -q 'multimem\.' $T/m2.cu && ok "README:633 prim reductions lower to multimem.ld_reduce with --allow-multicast" || bad "README:633 'a spec's own primitives have one today (multimem.ld_reduce)': k80 lowers to ld/st even with --allow-multicast (finding 3)"
# ---- README.md:68-70 errors ----
echo OLD > $T/keep.cu
"$P" $S -DBAD_k14 --kernel=k14 -o $T/keep.cu >/dev/null 2>$T/err.log; rc=$?
[ $rc -ne 0 ] && grep -q 'OLD' $T/keep.cu && grep -qE '^test/specs/user_specs39_probes.pk.cpp:[0-9]+:[0-9]+: error: ' $T/err.log \
  && ok "README:68 file:line:col error, non-zero exit, output untouched" || bad "README:68 errors"
"$P" $S --kernel=nosuch -o $T/ns.cu >/dev/null 2>&1 && bad "--kernel=nosuch refused" || ok "--kernel=nosuch refused"
"$P" templates/specs/all_reduce.mlir --mlir-print-ir-after=pk-select-transport -o $T/pr.cu 2>&1 | grep -q 'IR Dump After PkSelectTransportPass' && ok "README:69 --mlir-print-ir-after=pk-select-transport" || bad "--mlir-print-ir-after"
# ---- README.md:94, language.md:3 -I / -D / -std and the embedded spec.h ----
mkdir -p $T/inc/pk $T/inc2
echo '#error "the other spec.h"' > $T/inc/pk/spec.h
echo '#define SCALE 2.0f' > $T/inc2/myscale.h
printf '#include <pk/spec.h>\n#include "myscale.h"\nusing namespace pk;\nPK_KERNEL void s(Tensor<f32, 1> x, Tensor<f32, 1> y) {\n  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * SCALE * FACTOR, i);\n}\n' > $T/inc.pk.cpp
"$P" $T/inc.pk.cpp -I $T/inc -I $T/inc2 -D FACTOR=3.0f -std=c++20 -o $T/inc.cu -MD -MF $T/inc.d >/dev/null 2>&1 && grep -q myscale.h $T/inc.d \
  && ok "language.md:3 embedded spec.h first despite -I; -D, -std, depfile lists user headers" || bad "-I/-D/-std"
"$P" $T/inc.pk.cpp -I $T/inc2 -D FACTOR=3.0f -std=bogus -o $T/inc2.cu >/dev/null 2>&1 && bad "README:68 -std=bogus: clang prints 'error: invalid value' but pkc exits 0 (finding 4)" || ok "-std=bogus refused"
# ---- README.md:303-305: "Anything else beside a GEMM loop (... a max all-reduce ...) is an error at its line" ----
"$P" $S --kernel=k85 -o $T/k85.cu >/dev/null 2>&1 && bad "README:303 max all-reduce beside a GEMM loop is an error (it compiles as 2 launches, as language.md:281 and :497 say; finding 2)" || ok "README:303"
[ -e test/Fusion/rejects.cpp ] && ok "README:305 test/Fusion/rejects.cpp exists" || bad "README:305 test/Fusion/rejects.cpp does not exist (finding 2)"

# ---- refusals of the probes file: kernel, expected message fragment ----
while IFS='|' read -r k frag; do
  [ -z "$k" ] && continue
  out=$("$P" $S -DBAD_$k --kernel=$k -o $T/$k.cu 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -qF -- "$frag" <<<"$out" && grep -qE 'user_specs39_probes.pk.cpp:[0-9]+:[0-9]+' <<<"$out"; then ok "$k refused: $frag"
  else bad "$k: expected a refusal with '$frag' at a file:line:col (rc=$rc)"; fi
done <<'LIST'
k05|does not fit the i8 tile
k06|make that tile i32 first: cast<i32>(t)
k08|reduce cast<i32>(t)
k09|add them as i32
k14|reads a tensor at other tiles than it writes
k16|the step of range() must be positive
k18|with a run-time step
k20|1 to 4 dimensions
k21|cannot sit inside a tiles() loop
k23|padding of a clipped load
k27|convert the tile first
k31|at most 4096 rows
k31b|at most 2048 rows
k33|cast the tile
k42|cannot become [32, 8]
k45|cannot use an integer read from memory to choose a peer
k47|does not fit the i32 tile
k48|does not fit the i32 tile
k49|invalid operands to binary expression
k49b|not in the spec language
k64|fp8 values do not add
k70|view a 1-D one as [1, N]
k70b|view it as 2-D
k74|its bounds must be known on the host
k75|not an enclosing loop's variable
k77|flag slots are in [0, 1024)
k78|bumped outside a tile loop
k79|has no multicast form
k81|the same store writes at another tile
k82|writes the same place
k87|not a member function
k88|tile steps must be positive integer constants
k89|must be at most 2147483647
k90|make that tile i32 first
k91|one index per tensor dimension
k92|out of range for a tensor of rank 2
k93|more than the row's 16 elements
k94|out of range for a tensor of rank 2
k95|element types differ
k96|extents of 1 beyond the tensor's rank
k99|histogram counts i32 or i64 ids
LIST

# ---- the probes that must compile: the whole file, each kernel alone ----
# (the kernels outside the BAD_ blocks: the list pkc prints for an unknown --kernel)
for k in $("$P" $S --kernel=nosuch -o $T/none.cu 2>&1 | sed -n 's/.*it has: //p'); do
  "$P" $S --kernel=$k -o $T/$k.cu >/dev/null 2>&1 && ok "$k compiles" || bad "$k compiles"
done
# warning at the later store (language.md:62-63)
"$P" $S --kernel=k25 -o $T/k25.cu 2>&1 | grep -q "warning: this store writes its tile's padding" && ok "language.md:62 k25 warns at the later store" || bad "k25 warning"

echo "set39 CLI checks: $pass passed, $fail failed (failures are documented findings)"
rm -rf "$T"
[ $fail -eq 0 ]
