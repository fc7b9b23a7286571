// The twenty-fourth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as a new user writing the
// pieces of an inference server and of sequence models the way vLLM, SGLang, TensorRT-LLM, mamba_ssm, fla,
// RWKV and punica write them: KV-cache writes at per-sequence positions (MLA latent cache, sliding-window ring
// buffer, [B, H, L, D] static cache, block copy), rotary embeddings (interleaved, partial, computed in the
// kernel, multimodal sections), sampling helpers (soft-capping, repetition / presence / frequency penalties,
// min-p, top-k + top-p, vocabulary-parallel top-k and Gumbel-max, inverse-CDF sampling, beam search, typical
// acceptance), state-space and recurrent models (causal conv1d, selective scan, Mamba-2 decode, gated RMSNorm,
// RetNet recurrent and chunkwise, linear attention, RWKV), LoRA and multi-LoRA, SmoothQuant / fp8 / int8-in-i32
// weight-only GEMMs, and tensor-parallel decode steps at batch sizes of 1-64 rows. Nothing assumes a world size
// (W = world_size(), r = rank()); shapes that must divide by W say so. Each kernel compiles alone (pkc FILE
// --kernel NAME) and the file compiles as a whole. Each comment gives the kernel's exact semantics. Part (b) is
// user_specs24_bad.pk.cpp; findings in test/specs/specs24_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ KV cache writes

// DeepSeek-V2 MLA cache write (vLLM's concat_and_cache_mla after the latent norm and the rotary of k_pe):
// ckv [T, 512] bf16 (the compressed latent), kpe [T, 64] bf16, w [1, 512] f32, pos [T] i32, cosT / sinT
// [P, 32] f32, slot [T] i32. For each token t with slot s = slot[t] (s < 0 or s >= NS writes nothing):
//   cache[s, 0:512]   = bf16(ckv[t] * rsqrt(mean_j ckv[t, j]^2 + eps) * w)
//   cache[s, 512:544] = bf16(a c - b sn), cache[s, 544:576] = bf16(b c + a sn)
// with a = kpe[t, 0:32], b = kpe[t, 32:64], c = cosT[pos[t]], sn = sinT[pos[t]] (NeoX halves). cache [NS, 576].
PK_KERNEL void mla_latent_cache_write(Tensor<bf16, 2> ckv, Tensor<bf16, 2> kpe, Tensor<f32, 2> w, Tensor<i32, 1> pos,
                                      Tensor<f32, 2> cosT, Tensor<f32, 2> sinT, Tensor<i32, 1> slot,
                                      Tensor<bf16, 2> cache, float eps) {
  for (auto t : tiles(ckv.rows(), {16})) {
    auto x = cast<f32>(load<16, 512>(ckv, t, 0));
    auto s = load<16>(slot, t);
    store_rows(cache, cast<bf16>(x * rsqrt(row_sum(x * x) * (1.0f / 512.0f) + eps) * load<1, 512>(w, 0, 0)), s, 0);
    auto p = load<16>(pos, t);
    auto c = load_rows<16, 32>(cosT, p, 0);
    auto sn = load_rows<16, 32>(sinT, p, 0);
    auto a = cast<f32>(load<16, 32>(kpe, t, 0));
    auto b = cast<f32>(load<16, 32>(kpe, t, 32));
    store_rows(cache, cast<bf16>(a * c - b * sn), s, 512);
    store_rows(cache, cast<bf16>(b * c + a * sn), s, 544);
  }
}

// Mistral's rolling (sliding-window) KV cache: token t of sequence seq[t] at absolute position pos[t] goes to
// ring slot seq[t] * win + pos[t] % win of kc, vc [S * win, HD] (HD any width): kc[slot, :] = k[t, :],
// vc[slot, :] = v[t, :]. k, v [T, HD] f16; seq, pos [T] i64. (Within one call the positions of a sequence are
// fewer than win, so no two tokens share a slot.)
PK_KERNEL void sliding_window_cache_append(Tensor<f16, 2> k, Tensor<f16, 2> v, Tensor<i64, 1> seq,
                                           Tensor<i64, 1> pos, Tensor<f16, 2> kc, Tensor<f16, 2> vc, index win) {
  for (auto [t, n] : tiles(k.rows(), k.cols(), {32, 128})) {
    auto slot = load<32>(seq, t) * win + load<32>(pos, t) % win;
    store_rows(kc, load<32, 128>(k, t, n), slot, n);
    store_rows(vc, load<32, 128>(v, t, n), slot, n);
  }
}

// HF StaticCache decode write: k, v [B, H, D] bf16 (one new token per sequence, D <= 128), cache_pos [B] i64;
// kc[b, h, cache_pos[b], :] = k[b, h, :], vc likewise; kc, vc [B, H, L, D]. (The position is read from memory and
// taken on trust: 0 <= cache_pos[b] < L.)
PK_KERNEL void static_cache_decode_write(Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<i64, 1> cache_pos,
                                         Tensor<bf16, 4> kc, Tensor<bf16, 4> vc) {
  for (auto [b, h] : tiles(k.dim(0), k.dim(1), {1, 1})) {
    index p = cache_pos.at(b);
    store(kc, load<128>(k, b, h, 0), b, h, p, 0);
    store(vc, load<128>(v, b, h, 0), b, h, p, 0);
  }
}

// vLLM's copy_blocks (copy-on-write of shared prefix blocks) for the key cache of NB blocks of bs rows:
// pairs [NP, 2] i32 (src block, dst block), kc [NB * bs, HD] bf16. For every pair i and row j < bs:
// kc[pairs[i, 1] * bs + j, :] = kc[pairs[i, 0] * bs + j, :] (sources and destinations disjoint, as vLLM
// guarantees). Written out of place, from a source cache into the destination cache: kin, kout [NB bs, HD],
// where kout already holds kin's contents (the in-place form is refused, see the findings).
PK_KERNEL void kv_copy_blocks(Tensor<i32, 2> pairs, Tensor<bf16, 2> kin, Tensor<bf16, 2> kout, index bs) {
  for (auto [i, j] : tiles(pairs.rows(), bs, {1, 16})) {
    auto r = cast<i32>(row_index<16, 1>(j));
    auto live = r < bs;
    auto src = pairs.at(i, 0) * bs + r;
    auto dst = pairs.at(i, 1) * bs + r;
    for (auto n : range(0, kin.cols(), 256))
      store_rows(kout, load_rows<16, 256>(kin, src, n), where(live, dst, -1), n);
  }
}

// ============================================================================ Rotary embeddings

// GPT-J / DeepSeek interleaved rotary in place: x viewed as [T, H, 32, 2] bf16 (head dim 64, pairs (2i, 2i+1)),
// pos [T] i32, cosT / sinT [P, 32] f32. For pair i of head h of token t with c = cosT[pos[t], i],
// s = sinT[pos[t], i]: (x0, x1) <- (x0 c - x1 s, x1 c + x0 s).
PK_KERNEL void rope_gptj_interleaved_inplace(Tensor<bf16, 4> x, Tensor<i32, 1> pos, Tensor<f32, 2> cosT,
                                             Tensor<f32, 2> sinT) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {16, 1})) {
    auto p = load<16>(pos, t);
    auto c = reshape<16, 1, 32, 1>(load_rows<16, 32>(cosT, p, 0));
    auto s = reshape<16, 1, 32, 1>(load_rows<16, 32>(sinT, p, 0));
    auto x0 = cast<f32>(load<16, 1, 32, 1>(x, t, h, 0, 0));
    auto x1 = cast<f32>(load<16, 1, 32, 1>(x, t, h, 0, 1));
    store(x, cast<bf16>(x0 * c - x1 * s), t, h, 0, 0);
    store(x, cast<bf16>(x1 * c + x0 * s), t, h, 0, 1);
  }
}

// Llama rotary with the angles computed in the kernel, q and k in place: q [T, Hq * 128], k [T, Hk * 128] bf16,
// pos [T] i32, theta (e.g. 500000). For j < 64: f_j = theta^(-j / 64), a = pos[t] * f_j (fp32);
// (x[h128 + j], x[h128 + 64 + j]) <- (x1 cos a - x2 sin a, x2 cos a + x1 sin a) in every head of q and of k.
PK_KERNEL void rope_llama_computed_qk(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<i32, 1> pos, float theta) {
  float lt = log(theta) * (1.0f / 64.0f);
  for (auto [t, n] : tiles(q.rows(), q.cols(), {16, 128})) {
    auto a = cast<f32>(load<16, 1>(pos, t)) * exp(col_index<16, 64>(0) * (-lt));
    auto c = cos(a);
    auto s = sin(a);
    auto x1 = cast<f32>(load<16, 64>(q, t, n));
    auto x2 = cast<f32>(load<16, 64>(q, t, n + 64));
    store(q, cast<bf16>(x1 * c - x2 * s), t, n);
    store(q, cast<bf16>(x2 * c + x1 * s), t, n + 64);
  }
  for (auto [t, n] : tiles(k.rows(), k.cols(), {16, 128})) {
    auto a = cast<f32>(load<16, 1>(pos, t)) * exp(col_index<16, 64>(0) * (-lt));
    auto c = cos(a);
    auto s = sin(a);
    auto x1 = cast<f32>(load<16, 64>(k, t, n));
    auto x2 = cast<f32>(load<16, 64>(k, t, n + 64));
    store(k, cast<bf16>(x1 * c - x2 * s), t, n);
    store(k, cast<bf16>(x2 * c + x1 * s), t, n + 64);
  }
}

// Partial rotary (GPT-NeoX / Phi, rotary_pct 0.25 of head dim 128): x [T, H, 128] f16 in place; only columns
// 0..31 of each head rotate (halves 0..15 and 16..31, NeoX style) with c = cosT[pos[t], j], s = sinT[pos[t], j],
// j < 16; columns 32..127 are not written. pos [T] i64, cosT / sinT [P, 16] f32.
PK_KERNEL void rope_partial_neox_inplace(Tensor<f16, 3> x, Tensor<i64, 1> pos, Tensor<f32, 2> cosT,
                                         Tensor<f32, 2> sinT) {
  for (auto [t, h] : tiles(x.dim(0), x.dim(1), {32, 1})) {
    auto p = load<32>(pos, t);
    auto c = reshape<32, 1, 16>(load_rows<32, 16>(cosT, p, 0));
    auto s = reshape<32, 1, 16>(load_rows<32, 16>(sinT, p, 0));
    auto x1 = cast<f32>(load<32, 1, 16>(x, t, h, 0));
    auto x2 = cast<f32>(load<32, 1, 16>(x, t, h, 16));
    store(x, cast<f16>(x1 * c - x2 * s), t, h, 0);
    store(x, cast<f16>(x2 * c + x1 * s), t, h, 16);
  }
}

// Qwen2-VL multimodal rotary (M-RoPE) of q in place: q [T, H * 128] bf16, pos3 [3, T] i32 (temporal, height,
// width positions), inv_freq [64] f32. Frequency j < 64 takes its position from section 0 for j < 16, section 1
// for 16 <= j < 40, section 2 for 40 <= j < 64: a = pos3[sec(j), t] * inv_freq[j];
// (x1, x2) <- (x1 cos a - x2 sin a, x2 cos a + x1 sin a), x1 = q[t, h128 + j], x2 = q[t, h128 + 64 + j].
PK_KERNEL void mrope_qwen2vl_inplace(Tensor<bf16, 2> q, Tensor<i32, 2> pos3, Tensor<f32, 1> inv_freq) {
  for (auto [t, n] : tiles(q.rows(), q.cols(), {16, 128})) {
    auto pt = cast<f32>(reshape<16, 1>(load<1, 16>(pos3, 0, t)));
    auto ph = cast<f32>(reshape<16, 1>(load<1, 16>(pos3, 1, t)));
    auto pw = cast<f32>(reshape<16, 1>(load<1, 16>(pos3, 2, t)));
    auto j = col_index<16, 64>(0);
    auto p = where(j < 16.0f, pt, where(j < 40.0f, ph, pw));
    auto a = p * load<1, 64>(inv_freq, 0);
    auto c = cos(a);
    auto s = sin(a);
    auto x1 = cast<f32>(load<16, 64>(q, t, n));
    auto x2 = cast<f32>(load<16, 64>(q, t, n + 64));
    store(q, cast<bf16>(x1 * c - x2 * s), t, n);
    store(q, cast<bf16>(x2 * c + x1 * s), t, n + 64);
  }
}

// ============================================================================ Sampling helpers

// Gemma-2 final-logit soft-capping with temperature, in place: logits [B, V] f32 (any V);
// logits[b, v] = cap * tanh(logits[b, v] / cap) / temp.
PK_KERNEL void logit_softcap_temperature_inplace(Tensor<f32, 2> logits, float cap, float temp) {
  for (auto [b, n] : tiles(logits.rows(), logits.cols(), {4, 1024}))
    store(logits, tanh(load<4, 1024>(logits, b, n) * (1.0f / cap)) * (cap / temp), b, n);
}

// HF RepetitionPenaltyLogitsProcessor on flat views (the language has no gather of single elements of a 2-D
// tensor, see the findings): logits and out are [B V, 1] f32 (the [B, V] tables flattened, V = vocab),
// prev [B, L] i32 (ids already in sequence b, any order, repeats allowed; -1 pads). out = logits, except
// out[b V + v] for every v in prev[b]: logits[b V + v] / penalty where it is > 0, logits[b V + v] * penalty
// otherwise. A repeated id writes the same value twice.
PK_KERNEL void repetition_penalty_gathered(Tensor<f32, 2> logits, Tensor<i32, 2> prev, Tensor<f32, 2> out,
                                           index vocab, float penalty) {
  for (auto i : tiles(logits.rows(), {4096})) store(out, load<4096, 1>(logits, i, 0), i, 0);
  for (auto [b, j] : tiles(prev.rows(), prev.cols(), {1, 64})) {
    auto ids = reshape<64, 1>(load<1, 64>(prev, b, j));
    auto flat = where(ids >= 0, ids + b * vocab, -1);
    auto x = load_rows<64, 1>(logits, flat, 0);
    store_rows(out, where(x > 0.0f, x * (1.0f / penalty), x * penalty), flat, 0);
  }
}

// OpenAI presence / frequency penalties: out_ids [B, L] i32 (the tokens generated so far, -1 pads), counts
// [B V, 1] f32 (a flat [B, V] count table, zeroed here), logits [B, V] f32 in place:
// cnt[b V + v] = #{l : out_ids[b, l] == v}; logits[b, v] -= freq * cnt[b V + v] + pres * (cnt[b V + v] > 0).
PK_KERNEL void presence_frequency_penalty(Tensor<i32, 2> out_ids, Tensor<f32, 2> counts, Tensor<f32, 2> logits,
                                          float freq, float pres) {
  for (auto i : tiles(counts.rows(), {4096})) store(counts, zeros<f32, 4096, 1>(), i, 0);
  index v = logits.cols();
  for (auto [b, j] : tiles(out_ids.rows(), out_ids.cols(), {1, 128})) {
    auto ids = reshape<128, 1>(load<1, 128>(out_ids, b, j));
    store_add_rows(counts, zeros<f32, 128, 1>() + 1.0f, where(ids >= 0, ids + b * v, -1), 0);
  }
  for (auto [b, n] : tiles(logits.rows(), logits.cols(), {1, 1024})) {
    auto c = reshape<1, 1024>(load<1024, 1>(counts, b * v + n, 0));
    store(logits, load<1, 1024>(logits, b, n) - c * freq - where(c > 0.0f, pres, 0.0f), b, n);
  }
}

// Min-p filtering of wide rows (any V): logits [B, V] f32; p = softmax(logits[b] / temp); keep v where
// p[b, v] >= min_p * max_v p[b, v]; probs[b, v] = p[b, v] / sum_{kept} p[b, u] where kept, else 0.
// (p >= min_p * pmax is e >= min_p with e = exp(x / temp - max / temp).) Three passes over 1024-column chunks.
PK_KERNEL void min_p_filter_wide(Tensor<f32, 2> logits, Tensor<f32, 2> probs, float temp, float min_p) {
  float it = 1.0f / temp;
  for (auto b : tiles(logits.rows(), {4})) {
    auto mx = zeros<f32, 4, 1>() - 1e30f;
    for (auto n : range(0, logits.cols(), 1024)) {
      auto x = where(col_index<4, 1024>(n) < logits.cols(), load<4, 1024>(logits, b, n) * it, -1e30f);
      mx = max(mx, row_max(x));
    }
    auto kept = zeros<f32, 4, 1>();
    for (auto n : range(0, logits.cols(), 1024)) {
      auto e = exp(load<4, 1024>(logits, b, n) * it - mx);
      kept = kept + row_sum(where((e >= min_p) && (col_index<4, 1024>(n) < logits.cols()), e, 0.0f));
    }
    for (auto n : range(0, logits.cols(), 1024)) {
      auto e = exp(load<4, 1024>(logits, b, n) * it - mx);
      store(probs, where(e >= min_p, e / kept, 0.0f), b, n);
    }
  }
}

// Top-k then top-p sampling (vLLM's sampler for k = 64): logits [B, V] f32 (V <= 2048), u [B] f32 uniform in
// [0, 1). c = the 64 largest logits of row b, largest first, with columns ci; q = softmax(c / temp);
// Q_i = q_0 + .. + q_i; keep i while Q_i - q_i < top_p (the first is always kept); z = sum of kept q;
// tok[b] = ci[i*] where i* = the number of kept i with Q_i < u[b] z (at most kept - 1). tok i32 [B].
PK_KERNEL void topk_topp_sample(Tensor<f32, 2> logits, Tensor<f32, 1> u, Tensor<i32, 1> tok, float temp,
                                float top_p) {
  for (auto b : tiles(logits.rows(), {8})) {
    auto x = load<8, 2048>(logits, b, 0);
    auto c = row_topk<64>(x) * (1.0f / temp);
    auto ci = row_topk_index<64>(x);
    auto e = exp(c - row_max(c));
    auto q = e / row_sum(e);
    auto cq = cumsum(q);
    auto keep = (cq - q) < top_p;
    auto z = row_sum(where(keep, q, 0.0f));
    auto nk = row_sum(where(keep, 1.0f, 0.0f));
    auto below = row_sum(where(keep && (cq < load<8, 1>(u, b) * z), 1.0f, 0.0f));
    auto pick = min(below, nk - 1.0f);
    auto id = row_sum(where(col_index<8, 64>(0) == pick, cast<f32>(ci), 0.0f));
    store(tok, cast<i32>(id), b);
  }
}

// Vocabulary-parallel top-8: rank r holds logits [B, Vl] f32 (Vl <= 2048, global column r Vl + v). Each rank
// writes its 8 best values and their global columns into cv [B, 8] f32 / ci [B, 8] i32 (symmetric), gathers all
// ranks' candidates along columns into gv [B, 8W] / gi [B, 8W] (W <= 8), and writes the global top 8 (largest
// first, values and global columns; ties to the lower gathered column, i.e. the lower rank) into top_v [B, 8] f32,
// top_i [B, 8] i32 on every rank.
PK_KERNEL void vp_topk8_allgather(Tensor<f32, 2> logits, Sym<f32, 2> cv, Sym<i32, 2> ci, Sym<f32, 2> gv,
                                  Sym<i32, 2> gi, Tensor<f32, 2> top_v, Tensor<i32, 2> top_i) {
  for (auto b : tiles(logits.rows(), {16})) {
    auto x = load<16, 2048>(logits, b, 0);
    store(cv, row_topk<8>(x), b, 0);
    store(ci, row_topk_index<8>(x) + rank() * logits.cols(), b, 0);
  }
  all_gather(cv, gv, 1);
  all_gather(ci, gi, 1);
  for (auto b : tiles(logits.rows(), {16})) {
    auto g = load<16, 64>(gv, b, 0);
    auto j = row_topk_index<8>(g);
    store(top_v, row_topk<8>(g), b, 0);
    auto ids = load<16, 64>(gi, b, 0);
    auto out = zeros<i32, 16, 8>();
    for (auto k : range(0, 8)) {
      auto jk = row_sum(where(col_index<16, 8>(0) == float(k), cast<f32>(j), 0.0f));
      auto idk = row_sum(where(col_index<16, 64>(0) == jk, cast<f32>(ids), 0.0f));
      out = out + where(col_index<16, 8>(0) == float(k), cast<i32>(idk), 0);
    }
    store(top_i, out, b, 0);
  }
}

// Vocabulary-parallel Gumbel-max sampling: rank r holds logits [B, Vl] f32 (Vl <= 2048, global columns r Vl ..);
// g[b, v] = -log(-log(uniform(seed, b, r Vl + v))) (the noise of the global column, so any W samples the same
// token); each rank's best y = logits / temp + g and its global column go to cand_v [B, 1] / cand_i [B, 1]
// (symmetric), all-gathered along columns into all_v / all_i [B, W]; tok[b] = the global column of the largest
// (the lowest rank on ties), i64 [B].
PK_KERNEL void vp_gumbel_max_sample(Tensor<f32, 2> logits, Sym<f32, 2> cand_v, Sym<i32, 2> cand_i,
                                    Sym<f32, 2> all_v, Sym<i32, 2> all_i, Tensor<i64, 1> tok, index seed,
                                    float temp) {
  index vl = logits.cols();
  for (auto b : tiles(logits.rows(), {8})) {
    auto g = -log(-log(uniform<8, 2048>(seed, b, rank() * vl)));
    auto y = where(col_index<8, 2048>(0) < vl, load<8, 2048>(logits, b, 0) * (1.0f / temp) + g, -1e30f);
    store(cand_v, row_topk<1>(y), b, 0);
    store(cand_i, row_topk_index<1>(y) + rank() * vl, b, 0);
  }
  all_gather(cand_v, all_v, 1);
  all_gather(cand_i, all_i, 1);
  for (auto b : tiles(logits.rows(), {8})) {
    auto v = where(col_index<8, 16>(0) < world_size(), load<8, 16>(all_v, b, 0), -1e30f);
    auto w = row_topk_index<1>(v);
    auto id = row_sum(where(col_index<8, 16>(0) == cast<f32>(w), cast<f32>(load<8, 16>(all_i, b, 0)), 0.0f));
    store(tok, cast<i64>(id), b);
  }
}

// Inverse-CDF categorical sampling over wide rows: probs [B, V] f32 (rows sum to 1, any V), u [B, 1] f32;
// tok[b] = min(#{v : P_v < u[b]}, V - 1) with P_v = probs[b, 0] + .. + probs[b, v] (i32 [B, 1]).
// 1024-column chunks carry the running sum and the count.
PK_KERNEL void inverse_cdf_sample_wide(Tensor<f32, 2> probs, Tensor<f32, 2> u, Tensor<i32, 2> tok) {
  for (auto b : tiles(probs.rows(), {4})) {
    auto run = zeros<f32, 4, 1>();
    auto cnt = zeros<f32, 4, 1>();
    auto ut = load<4, 1>(u, b, 0);
    for (auto n : range(0, probs.cols(), 1024)) {
      auto c = cumsum(load<4, 1024>(probs, b, n)) + run;
      cnt = cnt + row_sum(where((c < ut) && (col_index<4, 1024>(n) < probs.cols()), 1.0f, 0.0f));
      run = run + row_sum(load<4, 1024>(probs, b, n));
    }
    store(tok, cast<i32>(min(cnt, float(probs.cols() - 1))), b, 0);
  }
}

// Beam-search step over beams * V candidates (4 beams, V any): logp [B 4, V] f32 (log-softmax of each beam's
// logits, beam j of batch b in row 4b + j), bscore [B 4, 1] f32. cand[b, j V + v] = logp[4b + j, v] +
// bscore[4b + j]; the 8 largest candidates of batch b (largest first, ties to the lower flat index j V + v) go to
// top_s [B, 8] f32 and top_id [B, 8] i32 (the flat index). Two phases: each 2048-column chunk c of each beam row
// keeps its 8 best into pv / pi [B 4, NC 8] (NC = ceil(V / 2048), pi the flat index, chunk c at columns 8c..);
// the second phase gathers batch b's four beam rows side by side (beam j at columns j NC 8 ..) with load_rows at
// a negative column origin and takes the 8 best of those 4 NC 8 <= 2048 candidates.
PK_KERNEL void beam_search_topk_two_phase(Tensor<f32, 2> logp, Tensor<f32, 2> bscore, Tensor<f32, 2> pv,
                                          Tensor<i32, 2> pi, Tensor<f32, 2> top_s, Tensor<i32, 2> top_id) {
  index v = logp.cols();
  for (auto [r, c] : tiles(logp.rows(), logp.cols(), {4, 2048})) {
    auto x = load<4, 2048>(logp, r, c) + load<4, 1>(bscore, r, 0);
    auto j = cast<i32>(row_index<4, 8>(r)) % 4;
    store(pv, row_topk<8>(x), r, c / 256);
    store(pi, row_topk_index<8>(x) + c + j * v, r, c / 256);
  }
  index w = 4 * pv.cols();
  for (auto b : tiles(top_s.rows(), {4})) {
    auto x = zeros<f32, 4, 2048>() - 1e30f;
    auto ids = zeros<i32, 4, 2048>();
    for (auto j : range(0, 4)) {
      auto rowsel = cast<i32>(row_index<4, 1>(b)) * 4 + j;
      x = where(col_index<4, 2048>(0) >= float(j * pv.cols()) && col_index<4, 2048>(0) < float((j + 1) * pv.cols()),
                load_rows<4, 2048>(pv, rowsel, 0 - j * pv.cols()), x);
      ids = where(col_index<4, 2048>(0) >= float(j * pv.cols()) && col_index<4, 2048>(0) < float((j + 1) * pv.cols()),
                  load_rows<4, 2048>(pi, rowsel, 0 - j * pv.cols()), ids);
    }
    auto x2 = where(col_index<4, 2048>(0) < float(w), x, -1e30f);
    auto k = row_topk_index<8>(x2);
    store(top_s, row_topk<8>(x2), b, 0);
    auto out = zeros<i32, 4, 8>();
    for (auto q : range(0, 8)) {
      auto kq = row_sum(where(col_index<4, 8>(0) == float(q), cast<f32>(k), 0.0f));
      auto id = row_sum(where(col_index<4, 2048>(0) == kq, cast<f32>(ids), 0.0f));
      out = out + where(col_index<4, 8>(0) == float(q), cast<i32>(id), 0);
    }
    store(top_id, out, b, 0);
  }
}

// Medusa typical acceptance: pt [B (K + 1), V] f32 target probabilities of the K + 1 positions of each sequence
// (row b (K + 1) + j, V <= 2048), pt_flat [B (K + 1) V, 1] the same memory flattened (read only), draft [B, K] i32
// (K <= 15). H[b, j] = -sum_v pt log(pt) (0 log 0 = 0); draft j is typical when pt[b, j, draft[b, j]] >
// min(eps, delta exp(-H[b, j])); n[b] = the number of leading typical drafts; out [B, K + 1] i32: out[b, j] =
// draft[b, j] for j < n[b], out[b, n[b]] = bonus[b] (i32 [B, 1], the token sampled at position n[b] by the
// caller), -1 after. The entropy is stored in ent [B (K + 1), 1] f32 in a first phase; the second reads it.
PK_KERNEL void medusa_typical_acceptance(Tensor<f32, 2> pt, Tensor<f32, 2> pt_flat, Tensor<i32, 2> draft,
                                         Tensor<i32, 2> bonus, Tensor<f32, 2> ent, Tensor<i32, 2> out, float eps,
                                         float delta) {
  for (auto r : tiles(pt.rows(), {8})) {
    auto p = load<8, 2048>(pt, r, 0);
    store(ent, -row_sum(where(p > 0.0f, p * log(max(p, 1e-30f)), 0.0f)), r, 0);
  }
  index kk = draft.cols();
  index v = pt.cols();
  for (auto b : tiles(draft.rows(), {16})) {
    auto d = load<16, 16>(draft, b, 0);
    auto j = cast<i32>(col_index<16, 16>(0));
    auto row = cast<i32>(row_index<16, 16>(b)) * (kk + 1) + j;
    auto live = j < kk;
    auto h = zeros<f32, 16, 16>();
    auto pd = zeros<f32, 16, 16>();
    for (auto q : range(0, 16)) {
      auto sel = j == q;
      auto rq = row_sum(where(sel, cast<f32>(row), 0.0f));
      auto dq = row_sum(where(sel, cast<f32>(d), 0.0f));
      auto eq = load_rows<16, 1>(ent, cast<i32>(rq), 0);
      auto pq = load_rows<16, 1>(pt_flat, cast<i32>(rq) * v + cast<i32>(dq), 0);
      h = where(sel, eq, h);
      pd = where(sel, pq, pd);
    }
    auto typical = (pd > min(exp(-h) * delta, eps)) && cast<f32>(live);
    auto lead = cumsum(where(typical, 0, 1)) == 0;
    auto n = row_sum(where(lead && live, 1.0f, 0.0f));
    auto jf = cast<f32>(j);
    auto res = where(jf < n, d, where(jf == n, load<16, 1>(bonus, b, 0), -1));
    store(out, res, b, 0);
  }
}

// ============================================================================ State-space and recurrent models

// Mamba's causal depthwise conv1d with SiLU over the sequence (causal_conv1d_fn, width 4): x [B, T, C] bf16,
// w [4, C] f32, bias [C] f32; y[b, t, c] = bf16(silu(bias[c] + sum_{k<4} w[k, c] x[b, t - 3 + k, c])) with x at
// negative positions 0 (each sequence starts fresh: positions before t = 0 of sequence b are not sequence
// b - 1's last ones).
PK_KERNEL void causal_conv1d_silu(Tensor<bf16, 3> x, Tensor<f32, 2> w, Tensor<f32, 1> bias, Tensor<bf16, 3> y) {
  for (auto [b, t, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 128})) {
    auto acc = zeros<f32, 16, 128>() + load<1, 128>(bias, c);
    for (auto k : range(0, 4))
      acc = acc + cast<f32>(load<16, 128>(x, b, t - 3 + k, c)) * load<1, 128>(w, k, c);
    store(y, cast<bf16>(silu(acc)), b, t, c);
  }
}

// Mamba's causal_conv1d_update for one decode token, the state in place: state [B, 3, C] f32 (the last three
// inputs, oldest first), x [B, C] f32 (the new input), w [4, C], bias [C] f32.
// y[b, c] = silu(bias[c] + w[0, c] s0 + w[1, c] s1 + w[2, c] s2 + w[3, c] x[b, c]); then the state becomes
// (s1, s2, x[b]).
PK_KERNEL void causal_conv1d_update_inplace(Tensor<f32, 3> state, Tensor<f32, 2> x, Tensor<f32, 2> w,
                                            Tensor<f32, 1> bias, Tensor<f32, 2> y) {
  for (auto [b, c] : tiles(state.dim(0), state.dim(2), {1, 256})) {
    auto s0 = load<1, 256>(state, b, 0, c);
    auto s1 = load<1, 256>(state, b, 1, c);
    auto s2 = load<1, 256>(state, b, 2, c);
    auto xt = load<1, 256>(x, b, c);
    auto acc = load<1, 256>(bias, c) + load<1, 256>(w, 0, c) * s0 + load<1, 256>(w, 1, c) * s1 +
               load<1, 256>(w, 2, c) * s2 + load<1, 256>(w, 3, c) * xt;
    store(y, silu(acc), b, c);
    store(state, s1, b, 0, c);
    store(state, s2, b, 1, c);
    store(state, xt, b, 2, c);
  }
}

// Mamba-1 selective scan (selective_scan_fn with z and D, dt softplus, N = 16): u, dt, z [B, T, Dm] bf16;
// A [Dm, 16] f32; Bm, Cm [B, T, 16] f32; Dv [Dm] f32; dt_bias [Dm] f32; h0 [B, Dm, 16] f32 the initial state.
// For each b, channel d and t in order: delta = softplus(dt[b, t, d] + dt_bias[d]);
// h[d, n] = exp(delta A[d, n]) h[d, n] + delta Bm[b, t, n] u[b, t, d];
// y[b, t, d] = bf16((sum_n Cm[b, t, n] h[d, n] + Dv[d] u[b, t, d]) * silu(z[b, t, d])); hT [B, Dm, 16] = h after
// the last step.
PK_KERNEL void mamba1_selective_scan(Tensor<bf16, 3> u, Tensor<bf16, 3> dt, Tensor<bf16, 3> z, Tensor<f32, 2> A,
                                     Tensor<f32, 3> Bm, Tensor<f32, 3> Cm, Tensor<f32, 1> Dv, Tensor<f32, 1> dt_bias,
                                     Tensor<f32, 3> h0, Tensor<bf16, 3> y, Tensor<f32, 3> hT) {
  for (auto [b, d] : tiles(u.dim(0), u.dim(2), {1, 64})) {
    auto a = load<64, 16>(A, d, 0);
    auto dcol = reshape<64, 1>(load<64>(Dv, d));
    auto bias = reshape<64, 1>(load<64>(dt_bias, d));
    auto h = load<64, 16>(h0, b, d, 0);
    for (auto t : range(0, u.dim(1))) {
      auto ut = cast<f32>(reshape<64, 1>(load<1, 64>(u, b, t, d)));
      auto raw = cast<f32>(reshape<64, 1>(load<1, 64>(dt, b, t, d))) + bias;
      auto delta = where(raw > 20.0f, raw, log(1.0f + exp(raw)));
      h = exp(delta * a) * h + (delta * ut) * load<1, 16>(Bm, b, t, 0);
      auto yt = row_sum(h * load<1, 16>(Cm, b, t, 0)) + dcol * ut;
      auto zt = cast<f32>(reshape<64, 1>(load<1, 64>(z, b, t, d)));
      store(y, cast<bf16>(reshape<1, 64>(yt * silu(zt))), b, t, d);
    }
    store(hT, h, b, d, 0);
  }
}

// Mamba-2 SSD single-token decode (selective_state_update, ngroups 1, P = 64, N = 128), the state in place:
// state [B, H, 64, 128] f32; x, z [B, H, 64] bf16; dt [B, H] f32 raw; dt_bias, A, D [H] f32 (A < 0);
// Bm, Cm [B, 128] f32. delta = softplus(dt[b, h] + dt_bias[h]); dA = exp(delta A[h]);
// state[b, h, p, n] = dA state[b, h, p, n] + delta x[b, h, p] Bm[b, n];
// y[b, h, p] = bf16((sum_n state[b, h, p, n] Cm[b, n] + D[h] x[b, h, p]) * silu(z[b, h, p])) (the new state).
PK_KERNEL void mamba2_ssd_decode_step(Tensor<f32, 4> state, Tensor<bf16, 3> x, Tensor<bf16, 3> z, Tensor<f32, 2> dt,
                                      Tensor<f32, 1> dt_bias, Tensor<f32, 1> A, Tensor<f32, 1> D, Tensor<f32, 2> Bm,
                                      Tensor<f32, 2> Cm, Tensor<bf16, 3> y) {
  for (auto [b, h] : tiles(state.dim(0), state.dim(1), {1, 1})) {
    float raw = dt.at(b, h) + dt_bias.at(h);
    float delta = max(raw, 0.0f) + log(1.0f + exp(-abs(raw)));
    float da = exp(delta * A.at(h));
    auto xt = cast<f32>(reshape<64, 1>(load<64>(x, b, h, 0)));
    auto s = load<64, 128>(state, b, h, 0, 0) * da + (xt * delta) * load<1, 128>(Bm, b, 0);
    store(state, s, b, h, 0, 0);
    auto yt = row_sum(s * load<1, 128>(Cm, b, 0)) + xt * D.at(h);
    auto zt = cast<f32>(reshape<64, 1>(load<64>(z, b, h, 0)));
    store(y, cast<bf16>(reshape<64>(yt * silu(zt))), b, h, 0);
  }
}

// Mamba-2 gated RMSNorm with groups (RMSNormGated, norm_before_gate = False, group size 256): x, z [T, Dm] bf16
// (Dm a multiple of 256), w [Dm] f32. g = x * silu(z); for group k (columns 256k .. 256k + 255):
// y[t, j] = bf16(g[t, j] * rsqrt(mean_{j' in group} g[t, j']^2 + eps) * w[j]).
PK_KERNEL void mamba2_gated_rmsnorm_grouped(Tensor<bf16, 2> x, Tensor<bf16, 2> z, Tensor<f32, 1> w, Tensor<bf16, 2> y,
                                            float eps) {
  for (auto [t, n] : tiles(x.rows(), x.cols(), {8, 256})) {
    auto g = cast<f32>(load<8, 256>(x, t, n)) * silu(cast<f32>(load<8, 256>(z, t, n)));
    store(y, cast<bf16>(g * rsqrt(row_sum(g * g) * (1.0f / 256.0f) + eps) * load<1, 256>(w, n)), t, n);
  }
}

// ============================================================================ Linear attention, RetNet, RWKV

// RetNet recurrent decode (one token, D = 64), the state in place: S [H, 64, 64] f32, q, k, v [H, 64] bf16.
// gamma_h = 1 - 2^(-5 - h); S_h = gamma_h S_h + k_h^T v_h (outer product: S[h, i, j] += k[h, i] v[h, j]);
// o[h, j] = bf16(scale * sum_i q[h, i] S_h[i, j]) with the new S.
PK_KERNEL void retnet_recurrent_decode(Tensor<f32, 3> S, Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v,
                                       Tensor<bf16, 2> o, float scale) {
  for (auto h : tiles(S.dim(0), {1})) {
    float gamma = 1.0f - pow(2.0f, -5.0f - float(h));
    auto kc = cast<f32>(reshape<64, 1>(load<1, 64>(k, h, 0)));
    auto s = load<64, 64>(S, h, 0, 0) * gamma + kc * cast<f32>(load<1, 64>(v, h, 0));
    store(S, s, h, 0, 0);
    auto qc = cast<f32>(reshape<64, 1>(load<1, 64>(q, h, 0)));
    store(o, cast<bf16>(transpose(row_sum(transpose(s * qc))) * scale), h, 0);
  }
}

// RetNet chunkwise retention (chunk 64, D = 64, one decay per head): q, k, v [H, T, 64] bf16 (any T), o [H, T, 64]
// bf16, ST [H, 64, 64] f32 the state after the last token. gamma_h = 1 - 2^(-5 - h), lg = log(gamma_h). For the
// chunk starting at c with L = min(64, T - c) tokens (rows i, j < L):
//   o_i = sum_{j <= i} gamma^(i - j) (q_i . k_j) v_j + gamma^(i + 1) q_i S      (S the state before the chunk)
//   S <- gamma^L S + sum_j gamma^(L - 1 - j) k_j^T v_j
// Scores in fp32 from bf16 q, k (mma_t); the intra-chunk product and q S from bf16 operands (cast of the decayed
// scores and of S) with fp32 accumulation, as fla's chunk kernels do.
PK_KERNEL void retnet_chunkwise(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                Tensor<f32, 3> ST) {
  for (auto h : tiles(q.dim(0), {1})) {
    float lg = log(1.0f - pow(2.0f, -5.0f - float(h)));
    auto s = zeros<f32, 64, 64>();
    for (auto c : range(0, q.dim(1), 64)) {
      index len = min(q.dim(1) - c, 64);
      auto qt = load<64, 64>(q, h, c, 0);
      auto kt = load<64, 64>(k, h, c, 0);
      auto vt = load<64, 64>(v, h, c, 0);
      auto i = row_index<64, 64>(0);
      auto j = col_index<64, 64>(0);
      auto dmask = where(j <= i, exp((i - j) * lg), 0.0f);
      auto sc = mma_t(qt, kt, zeros<f32, 64, 64>()) * dmask;
      auto inter = mma(qt, cast<bf16>(s), zeros<f32, 64, 64>()) * exp((row_index<64, 1>(0) + 1.0f) * lg);
      auto out = mma(cast<bf16>(sc), vt, inter);
      store(o, cast<bf16>(out), h, c, 0);
      auto zeta = exp((float(len) - 1.0f - row_index<64, 1>(0)) * lg);
      auto kd = cast<bf16>(cast<f32>(kt) * zeta);
      s = mma(transpose(kd), vt, s * exp(float(len) * lg));
    }
    store(ST, s, h, 0, 0);
  }
}

// Non-causal linear attention with the elu + 1 feature map (Katharopoulos et al.), per head, D = 64:
// q, k, v [H, T, 64] bf16; phi(x) = elu(x) + 1 = (x > 0 ? x + 1 : exp(x)). kv [H 64, 64] f32 and ks [H, 64] f32
// are zeroed, then kv[h 64 + i, j] = sum_t phi(k)[h, t, i] v[h, t, j] and ks[h, i] = sum_t phi(k)[h, t, i] (adds
// over 64-token tiles; phi of a padding key row is exp(0) = 1, so those rows are masked out);
// o[h, t, :] = bf16(phi(q_t) kv_h / (phi(q_t) . ks_h)).
PK_KERNEL void linear_attention_elu(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<f32, 2> kv,
                                    Tensor<f32, 2> ks, Tensor<bf16, 3> o) {
  for (auto [h, n] : tiles(kv.rows(), kv.cols(), {64, 64})) store(kv, zeros<f32, 64, 64>(), h, n);
  for (auto h : tiles(ks.rows(), {16})) store(ks, zeros<f32, 16, 64>(), h, 0);
  for (auto [h, t] : tiles(k.dim(0), k.dim(1), {1, 64})) {
    auto kt = cast<f32>(load<64, 64>(k, h, t, 0));
    auto live = row_index<64, 1>(t) < float(k.dim(1));
    auto pk = where(live, where(kt > 0.0f, kt + 1.0f, exp(kt)), 0.0f);
    store_add(kv, mma(transpose(cast<bf16>(pk)), load<64, 64>(v, h, t, 0), zeros<f32, 64, 64>()), h * 64, 0);
    store_add(ks, transpose(row_sum(transpose(pk))), h, 0);
  }
  for (auto [h, t] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = cast<f32>(load<64, 64>(q, h, t, 0));
    auto pq = where(qt > 0.0f, qt + 1.0f, exp(qt));
    auto num = mma(cast<bf16>(pq), cast<bf16>(load<64, 64>(kv, h * 64, 0)), zeros<f32, 64, 64>());
    auto den = row_sum(pq * load<1, 64>(ks, h, 0));
    store(o, cast<bf16>(num / den), h, t, 0);
  }
}

// RWKV-4 WKV forward, numerically stable form (the official CUDA kernel): k, v [B, T, C] f32, w, u [C] f32
// (w = -exp(time_decay), already negative), y [B, T, C] f32. Per (b, c), with aa = bb = 0, pp = -1e38:
//   ww = u + k_t; p = max(pp, ww); e1 = exp(pp - p); e2 = exp(ww - p); y_t = (e1 aa + e2 v_t) / (e1 bb + e2);
//   ww = w + pp; p = max(ww, k_t); e1 = exp(ww - p); e2 = exp(k_t - p); aa = e1 aa + e2 v_t; bb = e1 bb + e2; pp = p.
PK_KERNEL void rwkv4_wkv_forward(Tensor<f32, 3> k, Tensor<f32, 3> v, Tensor<f32, 1> w, Tensor<f32, 1> u,
                                 Tensor<f32, 3> y) {
  for (auto [b, c] : tiles(k.dim(0), k.dim(2), {1, 256})) {
    auto wt = load<1, 256>(w, c);
    auto ut = load<1, 256>(u, c);
    auto aa = zeros<f32, 1, 256>();
    auto bb = zeros<f32, 1, 256>();
    auto pp = zeros<f32, 1, 256>() - 1e38f;
    for (auto t : range(0, k.dim(1))) {
      auto kt = load<1, 256>(k, b, t, c);
      auto vt = load<1, 256>(v, b, t, c);
      auto ww = ut + kt;
      auto p = max(pp, ww);
      auto e1 = exp(pp - p);
      auto e2 = exp(ww - p);
      store(y, (e1 * aa + e2 * vt) / (e1 * bb + e2), b, t, c);
      auto ww2 = wt + pp;
      auto p2 = max(ww2, kt);
      auto f1 = exp(ww2 - p2);
      auto f2 = exp(kt - p2);
      aa = f1 * aa + f2 * vt;
      bb = f1 * bb + f2;
      pp = p2;
    }
  }
}

// RWKV token shift with the carried last token (time-mix inputs of a chunk): x [B, T, C] bf16, last [B, C] bf16
// (the previous chunk's final token of each sequence), mu_k, mu_v, mu_r [C] f32. xp[b, t] = x[b, t - 1] for t > 0,
// last[b] for t = 0; xk = bf16(x mu_k + xp (1 - mu_k)), likewise xv, xr; then last[b] = x[b, T - 1] (after every
// read of last).
PK_KERNEL void rwkv_token_shift_mix(Tensor<bf16, 3> x, Tensor<bf16, 2> last, Tensor<f32, 1> mu_k, Tensor<f32, 1> mu_v,
                                   Tensor<f32, 1> mu_r, Tensor<bf16, 3> xk, Tensor<bf16, 3> xv, Tensor<bf16, 3> xr) {
  for (auto [b, t, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 256})) {
    auto xt = cast<f32>(load<1, 16, 256>(x, b, t, c));
    auto first = dim_index<1, 1, 16, 256>(t) == 0.0f;
    auto xp = where(first, cast<f32>(load<1, 1, 256>(last, b, c)), cast<f32>(load<1, 16, 256>(x, b, t - 1, c)));
    auto mk = load<1, 1, 256>(mu_k, c);
    auto mv = load<1, 1, 256>(mu_v, c);
    auto mr = load<1, 1, 256>(mu_r, c);
    store(xk, cast<bf16>(xt * mk + xp * (1.0f - mk)), b, t, c);
    store(xv, cast<bf16>(xt * mv + xp * (1.0f - mv)), b, t, c);
    store(xr, cast<bf16>(xt * mr + xp * (1.0f - mr)), b, t, c);
  }
  for (auto [b, c] : tiles(x.dim(0), x.dim(2), {1, 256}))
    store(last, load<1, 256>(x, b, x.dim(1) - 1, c), b, c);
}

// ============================================================================ LoRA

// LoRA on a linear layer, written as the natural fused loop: x [T, K] bf16, w [N, K] bf16 (torch layout), la
// [16, K] bf16 (A, rank 16), u [T, 16] bf16 scratch, lb [N, 16] bf16 (B, pre-multiplied by alpha / r by the
// caller). u = bf16(x la^T) (fp32 accumulation, then rounded); y [T, N] bf16 = bf16(x w^T + u lb^T).
PK_KERNEL void lora_linear_fused(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> la, Tensor<bf16, 2> u,
                                 Tensor<bf16, 2> lb, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {64})) {
    auto acc = zeros<f32, 64, 16>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<16, 64>(la, 0, k), acc);
    store(u, cast<bf16>(acc), m, 0);
  }
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    acc = mma_t(load<128, 16>(u, m, 0), load<256, 16>(lb, n, 0), acc);
    store(y, cast<bf16>(acc), m, n);
  }
}

// The same LoRA linear with the low-rank delta as its own product and the base GEMM's epilogue adding it:
// u = bf16(x la^T) [T, 16]; d = u lb^T [T, N] f32; y = bf16(x w^T + d).
PK_KERNEL void lora_linear_delta_epilogue(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<bf16, 2> la, Tensor<bf16, 2> u,
                                          Tensor<bf16, 2> lb, Tensor<f32, 2> d, Tensor<bf16, 2> y) {
  for (auto m : tiles(x.rows(), {64})) {
    auto acc = zeros<f32, 64, 16>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<16, 64>(la, 0, k), acc);
    store(u, cast<bf16>(acc), m, 0);
  }
  for (auto [m, n] : tiles(u.rows(), lb.rows(), {64, 128}))
    store(d, mma_t(load<64, 16>(u, m, 0), load<128, 16>(lb, n, 0), zeros<f32, 64, 128>()), m, n);
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(y, cast<bf16>(acc + load<128, 256>(d, m, n)), m, n);
  }
}

// Punica BGMV multi-LoRA for a decode batch: x [T, H] bf16 (H <= 4096), idx [T] i32 (the adapter of token t,
// -1 = none), A [NA 16, H] bf16 (adapter a's rank-16 rows at a 16 .. a 16 + 15), Bt [NA 16, N] bf16 (adapter a's
// B transposed, rows a 16 + j), scale; y [T, N] f32 in place. Shrink: u[t, j] = sum_h x[t, h] A[idx[t] 16 + j, h]
// (fp32, into u [T, 16] f32); expand: y[t, n] += scale * sum_j u[t, j] Bt[idx[t] 16 + j, n]. A token with idx -1
// gathers rows at negative indices, which read zeros, so it adds 0.
PK_KERNEL void multi_lora_bgmv(Tensor<bf16, 2> x, Tensor<i32, 1> idx, Tensor<bf16, 2> A, Tensor<bf16, 2> Bt,
                               Tensor<f32, 2> u, Tensor<f32, 2> y, float scale) {
  for (auto t : tiles(x.rows(), {16})) {
    auto a = load<16, 1>(idx, t) * 16;
    auto uu = zeros<f32, 16, 16>();
    for (auto j : range(0, 16)) {
      auto part = zeros<f32, 16, 1>();
      for (auto h : range(0, x.cols(), 512))
        part = part + row_sum(cast<f32>(load<16, 512>(x, t, h)) * cast<f32>(load_rows<16, 512>(A, a + j, h)));
      uu = uu + where(col_index<16, 16>(0) == float(j), part, 0.0f);
    }
    store(u, uu, t, 0);
  }
  for (auto [t, n] : tiles(y.rows(), y.cols(), {16, 256})) {
    auto a = load<16, 1>(idx, t) * 16;
    auto acc = load<16, 256>(y, t, n);
    for (auto j : range(0, 16))
      acc = acc + load<16, 1>(u, t, j) * cast<f32>(load_rows<16, 256>(Bt, a + j, n)) * scale;
    store(y, acc, t, n);
  }
}

// ============================================================================ Quantised linear layers

// SmoothQuant per-token dynamic int8 quantisation (held in i32): x [T, H] bf16 (H <= 4096), smooth [H] f32.
// xs = x / smooth; s[t] = max(max_j |xs[t, j]|, 1e-8) / 127; q[t, j] = clamp(round_half_away(xs[t, j] / s[t]),
// -127, 127) as i32; scale [T, 1] f32 = s.
PK_KERNEL void smoothquant_per_token_int8(Tensor<bf16, 2> x, Tensor<f32, 1> smooth, Tensor<i32, 2> q,
                                          Tensor<f32, 2> scale) {
  for (auto t : tiles(x.rows(), {2})) {
    auto xs = cast<f32>(load<2, 4096>(x, t, 0)) / load<1, 4096>(smooth, 0);
    auto s = max(row_max(abs(xs)), 1e-8f) * (1.0f / 127.0f);
    auto r = xs / s;
    auto qi = cast<i32>(r + where(r >= 0.0f, 0.5f, -0.5f));
    store(q, max(min(qi, 127), -127), t, 0);
    store(scale, s, t, 0);
  }
}

// W8A8 GEMM in fp8 with per-token and per-channel scales (the fp8 analogue of SmoothQuant's int8 GEMM):
// xq [T, K] e4m3, wq [N, K] e4m3 (K a multiple of 16), sx [T] f32, sw [N] f32, bias [N] bf16;
// y[t, n] = bf16(sx[t] sw[n] sum_k xq[t, k] wq[n, k] + bias[n]).
PK_KERNEL void fp8_w8a8_rowcol_scale_bias(Tensor<f8e4m3, 2> xq, Tensor<f8e4m3, 2> wq, Tensor<f32, 1> sx,
                                          Tensor<f32, 1> sw, Tensor<bf16, 1> bias, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(xq.rows(), wq.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, xq.cols(), 64)) acc = mma_t(load<128, 64>(xq, m, k), load<256, 64>(wq, n, k), acc);
    store(y, cast<bf16>(acc * load<128, 1>(sx, m) * load<1, 256>(sw, n) + cast<f32>(load<1, 256>(bias, n))), m, n);
  }
}

// Weight-only int8 GEMM (W8A16) with group-wise scales: x [T, K] bf16, wq [N, K] i32 holding int8 values, ws
// [N, K / 128] f32 (group g = columns 128g .. 128g + 127, K a multiple of 128); y[t, n] = bf16(sum_k x[t, k]
// bf16(wq[n, k] ws[n, k / 128])) (each weight dequantised to bf16, then fp32 accumulation).
PK_KERNEL void w8a16_groupwise_gemm(Tensor<bf16, 2> x, Tensor<i32, 2> wq, Tensor<f32, 2> ws, Tensor<bf16, 2> y) {
  for (auto [m, n] : tiles(x.rows(), wq.rows(), {64, 64})) {
    auto acc = zeros<f32, 64, 64>();
    for (auto k : range(0, x.cols(), 128)) {
      auto wd = cast<bf16>(cast<f32>(load<64, 128>(wq, n, k)) * load<64, 1>(ws, n, k / 128));
      acc = mma_t(load<64, 128>(x, m, k), wd, acc);
    }
    store(y, cast<bf16>(acc), m, n);
  }
}

// ============================================================================ Tensor-parallel decode steps

// Row-parallel output projection of a decode step with the all-reduce, residual add and RMSNorm of the next
// layer (vLLM's RowParallelLinear + fused_add_rms_norm), B <= 64 rows: h [B, Fl] bf16 (this rank's slice of the
// MLP activations), wo [H, Fl] bf16 (this rank's input slice of the weight, torch layout), part [B, H] f32
// symmetric; res [B, H] bf16 the residual stream, in place; g [H] f32; y [B, H] bf16 (H any width).
// part = h wo^T (this rank's partial sum); part = sum over ranks (in place); res = bf16(res + part);
// y = bf16(res_new * rsqrt(mean_j res_new[b, j]^2 + eps) * g) (the norm of the rounded residual).
PK_KERNEL void tp_decode_rowparallel_ar_add_rmsnorm(Tensor<bf16, 2> h, Tensor<bf16, 2> wo, Sym<f32, 2> part,
                                                    Tensor<bf16, 2> res, Tensor<f32, 1> g, Tensor<bf16, 2> y,
                                                    float eps) {
  for (auto [m, n] : tiles(h.rows(), wo.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, h.cols(), 64)) acc = mma_t(load<64, 64>(h, m, k), load<128, 64>(wo, n, k), acc);
    store(part, acc, m, n);
  }
  all_reduce(Sum, part, part);
  for (auto b : tiles(res.rows(), {4})) {
    auto ss = zeros<f32, 4, 1>();
    for (auto n : range(0, res.cols(), 1024)) {
      auto r = cast<bf16>(cast<f32>(load<4, 1024>(res, b, n)) + load<4, 1024>(part, b, n));
      store(res, r, b, n);
      auto rf = cast<f32>(r);
      ss = ss + row_sum(rf * rf);
    }
    auto rs = rsqrt(ss * (1.0f / float(res.cols())) + eps);
    for (auto n : range(0, res.cols(), 1024))
      store(y, cast<bf16>(cast<f32>(load<4, 1024>(res, b, n)) * rs * load<1, 1024>(g, n)), b, n);
  }
}

// Column-parallel fused QKV projection of a decode step with the output all-gathered along columns (for a
// replicated consumer): x [B, K] bf16 (B <= 64), w [Nl, K] bf16 (this rank's rows of the weight), part [B, Nl]
// bf16 symmetric, full [B, W Nl] bf16: part = bf16(x w^T + bias_l) with bias [Nl] f32 (this rank's slice);
// full[:, r Nl + j] = rank r's part[:, j].
PK_KERNEL void tp_decode_colparallel_qkv_allgather(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 1> bias,
                                                   Sym<bf16, 2> part, Tensor<bf16, 2> full) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {64, 128})) {
    auto acc = zeros<f32, 64, 128>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<64, 64>(x, m, k), load<128, 64>(w, n, k), acc);
    store(part, cast<bf16>(acc + load<1, 128>(bias, n)), m, n);
  }
  all_gather(part, full, 1);
}

// Vocabulary-parallel LM head with greedy decoding, B <= 64 rows: x [B, K] bf16, w [Vl, K] bf16 (this rank's vocab
// rows, global row r Vl + v), logits [B, Vl] f32 (this rank's), best_v [B, 1] f32 / best_i [B, 1] i32 symmetric,
// all_v [B, W] f32 / all_i [B, W] i32, tok [B] i32. logits = x w^T; (best_v, best_i) = the largest logit of the
// rank's row and its global column (lowest column on ties, over 2048-column chunks: a later chunk wins only when
// strictly larger); gathered along columns; tok[b] = the global column of the largest gathered value, the lowest
// rank on ties (W <= 16).
PK_KERNEL void vp_lm_head_greedy(Tensor<bf16, 2> x, Tensor<bf16, 2> w, Tensor<f32, 2> logits, Sym<f32, 2> best_v,
                                 Sym<i32, 2> best_i, Sym<f32, 2> all_v, Sym<i32, 2> all_i, Tensor<i32, 1> tok) {
  for (auto [m, n] : tiles(x.rows(), w.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma_t(load<128, 64>(x, m, k), load<256, 64>(w, n, k), acc);
    store(logits, acc, m, n);
  }
  for (auto b : tiles(x.rows(), {8})) {
    auto bv = zeros<f32, 8, 1>() - 3.0e38f;
    auto bi = zeros<i32, 8, 1>();
    for (auto n : range(0, logits.cols(), 2048)) {
      auto t = where(col_index<8, 2048>(n) < logits.cols(), load<8, 2048>(logits, b, n), -3.0e38f);
      auto v = row_topk<1>(t);
      auto i = row_topk_index<1>(t) + n;
      bi = where(v > bv, i, bi);
      bv = max(v, bv);
    }
    store(best_v, bv, b, 0);
    store(best_i, bi + rank() * logits.cols(), b, 0);
  }
  all_gather(best_v, all_v, 1);
  all_gather(best_i, all_i, 1);
  for (auto b : tiles(x.rows(), {8})) {
    auto v = where(col_index<8, 16>(0) < world_size(), load<8, 16>(all_v, b, 0), -3.0e38f);
    auto win = row_topk_index<1>(v);
    auto id = row_sum(where(col_index<8, 16>(0) == cast<f32>(win), cast<f32>(load<8, 16>(all_i, b, 0)), 0.0f));
    store(tok, cast<i32>(id), b);
  }
}

// Decode-size fused residual add + LayerNorm (B <= 64 rows, H any width): x [B, H] bf16, res [B, H] bf16 in
// place, gamma, beta [H] f32; r = bf16(x + res) is stored into res; mu = mean_j r, var = mean_j (r - mu)^2 (two
// passes); y = bf16((r - mu) rsqrt(var + eps) gamma + beta).
PK_KERNEL void decode_add_layernorm(Tensor<bf16, 2> x, Tensor<bf16, 2> res, Tensor<f32, 1> gamma,
                                    Tensor<f32, 1> beta, Tensor<bf16, 2> y, float eps) {
  float inv_h = 1.0f / float(x.cols());
  for (auto b : tiles(x.rows(), {1})) {
    auto s = zeros<f32, 1, 1>();
    for (auto n : range(0, x.cols(), 2048)) {
      auto r = cast<bf16>(cast<f32>(load<1, 2048>(x, b, n)) + cast<f32>(load<1, 2048>(res, b, n)));
      store(res, r, b, n);
      s = s + row_sum(cast<f32>(r));
    }
    auto mu = s * inv_h;
    auto v = zeros<f32, 1, 1>();
    for (auto n : range(0, x.cols(), 2048)) {
      auto d = where(col_index<1, 2048>(n) < x.cols(), cast<f32>(load<1, 2048>(res, b, n)) - mu, 0.0f);
      v = v + row_sum(d * d);
    }
    auto rs = rsqrt(v * inv_h + eps);
    for (auto n : range(0, x.cols(), 2048))
      store(y, cast<bf16>((cast<f32>(load<1, 2048>(res, b, n)) - mu) * rs * load<1, 2048>(gamma, n) +
                          load<1, 2048>(beta, n)), b, n);
  }
}
