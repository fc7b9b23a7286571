// Vocabulary-parallel embedding lookup (the Megatron-LM form): the [W V, H] embedding table is
// split by rows over W ranks, rank r holding rows [r V, (r + 1) V) as its [V, H] `table`.
// Every rank looks up every token of `ids`, reading a row of zeros for ids outside its shard
// (load_rows is checked: an id out of range is never an out-of-bounds access), and an
// all-reduce sums the ranks' rows, so `out` [T, H] holds each token's embedding on every rank.
// `partial` is the [T, H] workspace the lookup writes before the all-reduce.
#include <pk/spec.h>
using namespace pk;

PK_KERNEL void embedding_vocab_parallel(Tensor<i32, 1> ids, Tensor<bf16, 2> table,
                                        Scratch<bf16, 2> partial, Sym<bf16, 2> out) {
  for (auto [t, n] : tiles(partial.rows(), partial.cols(), {16, 256}))
    store(partial, load_rows<16, 256>(table, load<16>(ids, t) - rank() * table.rows(), n), t, n);
  all_reduce(Sum, partial, out);
}
