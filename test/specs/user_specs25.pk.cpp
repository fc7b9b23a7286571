// The twenty-fifth user-written spec set, part (a): kernels that are CORRECT and that pkc accepts.
// Written from docs/language.md, README.md, pk/spec.h and the shipped specs only, as a new user writing the
// pieces of vision transformers, latent-diffusion UNets and DiTs, and their samplers: GroupNorm over [B, C, HW]
// and channels-last [B, HW, C] (statistics over channel groups, fused SiLU, scale-shift by a timestep embedding),
// DiT's adaLN modulation and gated residuals, sinusoidal timestep embeddings, patchify / unpatchify and patch
// embedding (im2col by index arithmetic, then a batched GEMM with a positional-embedding epilogue), 2-D rotary
// embeddings, pixel shuffle / unshuffle, space-to-depth, Swin patch merging, nearest and bilinear 2x upsampling,
// layout transposes, depthwise and dense 3x3 convolution as shifted loads, Swin window attention (shifted windows
// by gathered rows), text-conditioning cross-attention, joint image + text attention, classifier-free guidance,
// DDIM / Euler / flow-matching sampler steps, the VAE reparameterisation, diffusion training losses, and across
// ranks: CLIP's contrastive loss over all-gathered embeddings, patch-parallel convolution with halo rows stored
// into the neighbours, patch-parallel GroupNorm statistics, K/V all-gathered for patch-parallel attention, and a
// tensor-parallel DiT MLP. Nothing assumes a world size. Each kernel compiles alone (pkc FILE --kernel NAME) and
// the file compiles as a whole. Each kernel's comment gives its exact semantics (W = world_size(), r = rank();
// "x[i]" of a Sym is this rank's copy unless said otherwise; views such as "[B * G, 8, HW]" are the shapes the
// caller passes for the same memory). Part (b) is user_specs25_bad.pk.cpp; findings in
// test/specs/specs25_findings.md.
#include <pk/spec.h>
using namespace pk;

// ============================================================================ Group norms and conditioning

// 1. GroupNorm + SiLU of a UNet ResBlock, NCHW: x bf16 viewed [B * G, 8, HW] (8 channels per group, G = groups,
// HW any length); gamma, beta f32 [C] (C = 8 G). For row bg (sample bg / G, group g = bg % G):
// mean = sum_{i, p} x[bg, i, p] / (8 HW), var = sum x^2 / (8 HW) - mean^2 (biased, as torch),
// y[bg, i, p] = bf16(silu((x - mean) * rsqrt(var + eps) * gamma[8 g + i] + beta[8 g + i])).
// Two passes of 256 columns; the padding columns of the last chunk read 0 and add nothing to the sums.
PK_KERNEL void group_norm_silu_nchw(Tensor<bf16, 3> x, Tensor<f32, 1> gamma, Tensor<f32, 1> beta, Tensor<bf16, 3> y,
                                    index groups, float eps) {
  float inv_n = 1.0f / float(x.dim(1) * x.dim(2));
  for (auto bg : tiles(x.dim(0), {1})) {
    index c0 = bg % groups * 8;
    auto s = zeros<f32, 1, 1>();
    auto ss = zeros<f32, 1, 1>();
    for (auto n : range(0, x.dim(2), 256)) {
      auto t = cast<f32>(load<8, 256>(x, bg, 0, n));
      s = s + row_sum(transpose(row_sum(t)));
      ss = ss + row_sum(transpose(row_sum(t * t)));
    }
    auto mean = s * inv_n;
    auto rstd = rsqrt(ss * inv_n - mean * mean + eps);
    auto g = load<8, 1>(gamma, c0);
    auto b = load<8, 1>(beta, c0);
    for (auto n : range(0, x.dim(2), 256)) {
      auto t = cast<f32>(load<8, 256>(x, bg, 0, n));
      store(y, cast<bf16>(silu((t - mean) * rstd * g + b)), bg, 0, n);
    }
  }
}

// 2. GroupNorm channels-last (NHWC, as diffusers' UNet runs in channels_last): x bf16 viewed [B, HW, G, 16]
// (16 channels per group); gamma, beta f32 [G, 16]. For sample b and group g over all HW pixels and the group's
// 16 channels: mean, var as in 1; y[b, p, g, i] = bf16((x - mean) * rsqrt(var + eps) * gamma[g, i] + beta[g, i]).
// One tile per (b, g); 64-pixel chunks, each [64, 16] tile strided by C in memory.
PK_KERNEL void group_norm_nhwc(Tensor<bf16, 4> x, Tensor<f32, 2> gamma, Tensor<f32, 2> beta, Tensor<bf16, 4> y,
                               float eps) {
  float inv_n = 1.0f / float(x.dim(1) * 16);
  for (auto [b, g] : tiles(x.dim(0), x.dim(2), {1, 1})) {
    auto s = zeros<f32, 1, 1>();
    auto ss = zeros<f32, 1, 1>();
    for (auto p : range(0, x.dim(1), 64)) {
      auto t = cast<f32>(load<64, 1, 16>(x, b, p, g, 0));
      auto t2 = reshape<64, 16>(t);
      s = s + row_sum(transpose(row_sum(t2)));
      ss = ss + row_sum(transpose(row_sum(t2 * t2)));
    }
    auto mean = reshape<1, 1, 1>(s * inv_n);
    auto rstd = rsqrt(reshape<1, 1, 1>(ss * inv_n) - mean * mean + eps);
    auto ga = reshape<1, 1, 16>(load<1, 16>(gamma, g, 0));
    auto be = reshape<1, 1, 16>(load<1, 16>(beta, g, 0));
    for (auto p : range(0, x.dim(1), 64)) {
      auto t = cast<f32>(load<64, 1, 16>(x, b, p, g, 0));
      store(y, cast<bf16>((t - mean) * rstd * ga + be), b, p, g, 0);
    }
  }
}

// 3. Scale-shift GroupNorm of a UNet ResBlock (use_scale_shift_norm): x f32 viewed [B, G, 4, HW] (4 channels per
// group); emb f32 [B, 2 C] from the timestep MLP, scale = emb[b, 0 : C], shift = emb[b, C : 2C] (C = 4 G);
// h = GroupNorm(x) (no affine, eps) then y[b, g, i, p] = h * (1 + scale[b, 4 g + i]) + shift[b, 4 g + i], then
// SiLU: y f32 same view as x. HW <= 1024 (one tile of [4, 1024] per (b, g)).
PK_KERNEL void scale_shift_group_norm(Tensor<f32, 4> x, Tensor<f32, 2> emb, Tensor<f32, 4> y, float eps) {
  index c = x.dim(1) * 4;
  float inv_n = 1.0f / float(x.dim(3) * 4);
  for (auto [b, g] : tiles(x.dim(0), x.dim(1), {1, 1})) {
    auto t = load<4, 1024>(x, b, g, 0, 0);
    auto mean = row_sum(transpose(row_sum(t))) * inv_n;
    auto d = t - mean;
    auto dm = where(col_index<4, 1024>(0) < x.dim(3), d, 0.0f);
    auto var = row_sum(transpose(row_sum(dm * dm))) * inv_n;
    auto sc = transpose(load<1, 4>(emb, b, g * 4));
    auto sh = transpose(load<1, 4>(emb, b, c + g * 4));
    store(y, silu(d * rsqrt(var + eps) * (sc + 1.0f) + sh), b, g, 0, 0);
  }
}

// 4. DiT adaLN-Zero modulation before attention: x bf16 [B, T, D] with D <= 1152; mod bf16 [B, 6, D] from the
// adaLN MLP (chunks: 0 shift_msa, 1 scale_msa, 2 gate_msa, 3 shift_mlp, 4 scale_mlp, 5 gate_mlp).
// h = LayerNorm(x[b, t, :]) without affine (eps 1e-6, biased variance over the D columns);
// y[b, t, :] = bf16(h * (1 + scale_msa[b]) + shift_msa[b]). Tiles of 16 tokens; padding columns masked out of
// the variance.
PK_KERNEL void adaln_modulate(Tensor<bf16, 3> x, Tensor<bf16, 3> mod, Tensor<bf16, 3> y) {
  float inv_d = 1.0f / float(x.dim(2));
  for (auto [b, t] : tiles(x.dim(0), x.dim(1), {1, 16})) {
    auto xt = cast<f32>(load<16, 1152>(x, b, t, 0));
    auto mean = row_sum(xt) * inv_d;
    auto d = where(col_index<16, 1152>(0) < x.dim(2), xt - mean, 0.0f);
    auto h = d * rsqrt(row_sum(d * d) * inv_d + 1e-6f);
    auto shift = cast<f32>(load<1, 1152>(mod, b, 0, 0));
    auto scale = cast<f32>(load<1, 1152>(mod, b, 1, 0));
    store(y, cast<bf16>(h * (scale + 1.0f) + shift), b, t, 0);
  }
}

// 5. DiT gated residual, in place: x f32 [B, T, D] residual stream; a bf16 [B, T, D] attention (or MLP) output;
// mod bf16 [B, 6, D] as in 4, chunk `which` (2 = gate_msa, 5 = gate_mlp):
// x[b, t, d] += gate[b, d] * a[b, t, d]. 8 x 256 tiles inside each sample (a 3-D loop: tiles of the flattened
// [B T, D] rows would cross from one sample into the next when T % 8 != 0), the gate row read once per tile.
PK_KERNEL void adaln_gated_residual(Tensor<f32, 3> x, Tensor<bf16, 3> a, Tensor<bf16, 3> mod, index which) {
  for (auto [b, t, d] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 8, 256})) {
    auto g = cast<f32>(load<1, 256>(mod, b, which, d));
    store(x, load<8, 256>(x, b, t, d) + g * cast<f32>(load<8, 256>(a, b, t, d)), b, t, d);
  }
}

// 6. Sinusoidal timestep embedding (DiT / diffusers get_timestep_embedding, flip_sin_to_cos): t f32 [B] (timesteps,
// fractional allowed); emb f32 [B, E], E even, half = E / 2; freq_j = exp(-ln(10000) j / half) for j < half;
// emb[b, j] = cos(t[b] freq_j) for j < half, emb[b, half + j] = sin(t[b] freq_j).
PK_KERNEL void timestep_embedding(Tensor<f32, 1> t, Tensor<f32, 2> emb) {
  index half = emb.cols() / 2;
  float c = -9.210340372f / float(half);
  for (auto [b, n] : tiles(emb.rows(), emb.cols(), {16, 128})) {
    auto col = col_index<16, 128>(n);
    auto j = where(col < half, col, col - float(half));
    auto arg = load<16, 1>(t, b) * exp(j * c);
    store(emb, where(col < half, cos(arg), sin(arg)), b, n);
  }
}

// 7. Timestep MLP of DiT (TimestepEmbedder): e f32 [B, 256] from 6 cast to bf16 by the caller as eb bf16 [B, 256];
// w1 bf16 [256, D], b1 bf16 [1, D], w2 bf16 [D, D], b2 bf16 [1, D];
// h = bf16(silu(eb w1 + b1)) [B, D]; c = bf16(h w2 + b2) [B, D]; then the adaLN input silu(c) is stored too:
// cs = bf16(silu(c)). Two GEMM loops (the second reads h) in one kernel.
PK_KERNEL void timestep_mlp(Tensor<bf16, 2> eb, Tensor<bf16, 2> w1, Tensor<bf16, 2> b1, Tensor<bf16, 2> w2,
                            Tensor<bf16, 2> b2, Tensor<bf16, 2> h, Tensor<bf16, 2> c, Tensor<bf16, 2> cs) {
  for (auto [m, n] : tiles(eb.rows(), w1.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, eb.cols(), 64)) acc = mma(load<128, 64>(eb, m, k), load<64, 256>(w1, k, n), acc);
    store(h, cast<bf16>(silu(acc + cast<f32>(load<1, 256>(b1, 0, n)))), m, n);
  }
  for (auto [m, n] : tiles(h.rows(), w2.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma(load<128, 64>(h, m, k), load<64, 256>(w2, k, n), acc);
    auto v = acc + cast<f32>(load<1, 256>(b2, 0, n));
    store(c, cast<bf16>(v), m, n);
    store(cs, cast<bf16>(silu(v)), m, n);
  }
}

// ============================================================================ Layouts: patches, shuffles, resampling

// 8. DiT patchify of a channels-last latent (p = 2, C = 4 latent channels): x bf16 [B, H, W, 4] passed as the view
// [B * H/2, 2, W/2, 8] (row bi = b H/2 + i, sub-row dy, patch column j, 8 = (dx, c)); tokens bf16 [B * H/2, W/2, 2, 8]
// (= [B, T = H/2 W/2, 16], feature (dy, dx, c)): tokens[bi, j, dy, :] = x[bi, dy, j, :].
PK_KERNEL void patchify_nhwc_p2(Tensor<bf16, 4> x, Tensor<bf16, 4> tokens) {
  for (auto [bi, j] : tiles(x.dim(0), x.dim(2), {1, 32})) {
    store(tokens, reshape<1, 32, 1, 8>(load<1, 1, 32, 8>(x, bi, 0, j, 0)), bi, j, 0, 0);
    store(tokens, reshape<1, 32, 1, 8>(load<1, 1, 32, 8>(x, bi, 1, j, 0)), bi, j, 1, 0);
  }
}

// 9. DiT unpatchify (final layer's inverse): tokens f32 [B, T, p p C] with p = 2, C = 8 (learned-sigma output:
// 4 eps + 4 var channels) passed as [B * H/2, W/2, 2, 16] (feature (dy, dx, c)); img f32 [B, H, W, 8] passed as
// [B * H/2, 2, W/2, 16]: img[bi, dy, j, :] = tokens[bi, j, dy, :]. Only the first 4 channels (eps) are wanted
// too: eps f32 [B * H/2, 2, W/2, 2, 4] is 5-D, so it is passed as [B * H, W/2, 2, 8] and written from the
// 8-channel half of each (dy, dx) block: eps[bi * 2 + dy, j, dx, 0 : 4] = tokens[bi, j, dy, dx * 8 + 0 : 4].
PK_KERNEL void unpatchify_p2(Tensor<f32, 4> tokens, Tensor<f32, 4> img, Tensor<f32, 4> eps) {
  for (auto [bi, j] : tiles(tokens.dim(0), tokens.dim(1), {1, 16})) {
    for (auto dy : range(0, 2, 1)) {
      auto t = load<1, 16, 1, 16>(tokens, bi, j, dy, 0);
      store(img, reshape<1, 1, 16, 16>(t), bi, dy, j, 0);
      store(eps, reshape<1, 16, 1, 4>(load<1, 16, 1, 4>(tokens, bi, j, dy, 0)), bi * 2 + dy, j, 0, 0);
      store(eps, reshape<1, 16, 1, 4>(load<1, 16, 1, 4>(tokens, bi, j, dy, 8)), bi * 2 + dy, j, 1, 0);
    }
  }
}

// 10. ViT patch embedding of an NCHW image by im2col, p = 16 (ViT-B/16): img bf16 [B, 3, 224, 224] passed as
// [B * 3 * 14, 16, 14, 16] (row (b, c, i), sub-row dy, patch column j, dx); patches bf16 [B * 14, 14, 3, 256]
// (= [B, 196, 768], feature (c, dy, dx) as torch's Conv2d weight flattens): patches[b 14 + i, j, c, dy 16 + dx] =
// img[(b 3 + c) 14 + i, dy, j, dx]. One tile per (b i, c, dy) row of 14 patches.
PK_KERNEL void patch_im2col_nchw_p16(Tensor<bf16, 4> img, Tensor<bf16, 4> patches) {
  for (auto [bi, c, dy] : tiles(patches.dim(0), 3, 16, {1, 1, 1})) {
    index b = bi / 14;
    index i = bi % 14;
    auto t = load<1, 1, 16, 16>(img, (b * 3 + c) * 14 + i, dy, 0, 0);
    store(patches, reshape<1, 16, 1, 16>(t), bi, 0, c, dy * 16);
  }
}

// 11. Patch embedding GEMM with positional embedding (batched GEMM, one 2-D weight): patches bf16 [B, T, K]
// (K = 768 from 10, or 16 from 8), w bf16 [N, K] (the conv weight flattened, as torch stores a Linear),
// bias bf16 [1, N], pos bf16 [T, N] (fixed 2-D sin-cos table, the same for every sample);
// x[b, t, n] = bf16(sum_k patches[b, t, k] w[n, k] + bias[n] + pos[t, n]).
PK_KERNEL void patch_embed_gemm_pos(Tensor<bf16, 3> patches, Tensor<bf16, 2> w, Tensor<bf16, 2> bias,
                                    Tensor<bf16, 2> pos, Tensor<bf16, 3> x) {
  for (auto [z, m, n] : tiles(patches.dim(0), patches.dim(1), w.rows(), {1, 128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, patches.dim(2), 64))
      acc = mma_t(load<128, 64>(patches, z, m, k), load<256, 64>(w, n, k), acc);
    store(x, cast<bf16>(acc + cast<f32>(load<1, 256>(bias, 0, n)) + cast<f32>(load<128, 256>(pos, m, n))), z, m, n);
  }
}

// 12. Pixel shuffle (sub-pixel convolution upsampling, r = 2), NCHW: x f32 [B, 4 C, H, W] passed as [B C 2, 2, H, W]
// (row (b, c, i), j, h, w: channel 4 c + 2 i + j); y f32 [B, C, 2H, 2W] passed as [B C H 2, W, 2] (row
// ((b C + c) H + h) 2 + i, w, j): y[b, c, 2h + i, 2w + j] = x[b, 4c + 2i + j, h, w]. The two j planes of a row are
// loaded as one [2, 64] tile and transposed to [64, 2], interleaving them.
PK_KERNEL void pixel_shuffle_nchw(Tensor<f32, 4> x, Tensor<f32, 3> y) {
  index hh = x.dim(2);
  for (auto [bci, h, w] : tiles(x.dim(0), x.dim(2), x.dim(3), {1, 1, 64})) {
    index bc = bci / 2;
    index i = bci % 2;
    auto t = reshape<2, 64>(load<1, 2, 1, 64>(x, bci, 0, h, w));
    store(y, reshape<1, 64, 2>(transpose(t)), (bc * hh + h) * 2 + i, w, 0);
  }
}

// 13. Pixel unshuffle / space-to-depth (r = 2), channels-last: x bf16 [B, H, W, C] passed as [B H/2, 2, W/2, 2 C];
// y bf16 [B, H/2, W/2, 4 C] passed as [B H/2, W/2, 2, 2 C] (output channel (2 dy + dx) C + c, torch's
// pixel_unshuffle order for channels-last data): y[bi, j, dy, :] = x[bi, dy, j, :]. C = 64 here (2C = 128 columns,
// one tile wide).
PK_KERNEL void pixel_unshuffle_nhwc(Tensor<bf16, 4> x, Tensor<bf16, 4> y) {
  for (auto [bi, j] : tiles(x.dim(0), x.dim(2), {1, 16})) {
    for (auto dy : range(0, 2, 1))
      store(y, reshape<1, 16, 1, 128>(load<1, 1, 16, 128>(x, bi, dy, j, 0)), bi, j, dy, 0);
  }
}

// 14. Swin patch merging (downsample): x f32 [B, H, W, C] passed as [B H/2, 2, W/2, 2 C]; out f32 [B, H/2 W/2, 4 C]
// passed as [B H/2, W/2, 4 C] = LayerNorm over 4C of cat(x0, x1, x2, x3) with x0 = x[2i, 2j], x1 = x[2i + 1, 2j],
// x2 = x[2i, 2j + 1], x3 = x[2i + 1, 2j + 1] (Swin's order, not pixel_unshuffle's), gamma, beta f32 [1, 4 C];
// eps 1e-5. C = 96 (Swin-T), so 4 C = 384: each token's four 96-channel pieces are four [16, 96] tiles, the
// statistics summed over the four, each piece normalised and stored at its column offset.
PK_KERNEL void swin_patch_merging(Tensor<f32, 4> x, Tensor<f32, 2> gamma, Tensor<f32, 2> beta, Tensor<f32, 3> out) {
  for (auto [bi, j] : tiles(x.dim(0), x.dim(2), {1, 16})) {
    auto x0 = reshape<16, 96>(load<1, 1, 16, 96>(x, bi, 0, j, 0));
    auto x1 = reshape<16, 96>(load<1, 1, 16, 96>(x, bi, 1, j, 0));
    auto x2 = reshape<16, 96>(load<1, 1, 16, 96>(x, bi, 0, j, 96));
    auto x3 = reshape<16, 96>(load<1, 1, 16, 96>(x, bi, 1, j, 96));
    auto mean = (row_sum(x0) + row_sum(x1) + row_sum(x2) + row_sum(x3)) * (1.0f / 384.0f);
    auto d0 = x0 - mean;
    auto d1 = x1 - mean;
    auto d2 = x2 - mean;
    auto d3 = x3 - mean;
    auto rs = rsqrt((row_sum(d0 * d0) + row_sum(d1 * d1) + row_sum(d2 * d2) + row_sum(d3 * d3)) * (1.0f / 384.0f) + 1e-5f);
    store(out, d0 * rs * load<1, 96>(gamma, 0, 0) + load<1, 96>(beta, 0, 0), bi, j, 0);
    store(out, d1 * rs * load<1, 96>(gamma, 0, 96) + load<1, 96>(beta, 0, 96), bi, j, 96);
    store(out, d2 * rs * load<1, 96>(gamma, 0, 192) + load<1, 96>(beta, 0, 192), bi, j, 192);
    store(out, d3 * rs * load<1, 96>(gamma, 0, 288) + load<1, 96>(beta, 0, 288), bi, j, 288);
  }
}

// 15. Nearest-neighbour 2x upsampling (UNet Upsample before its conv), channels-last: x bf16 [B, H, W, C] passed as
// [B H, W, C]; y bf16 [B, 2H, 2W, C] passed as [B H 2, W, 2, C] (row (b H + h) 2 + i, w, j, c):
// y[bh 2 + i, w, j, c] = x[bh, w, c] for i, j in {0, 1}. Tiles of 16 pixels x 64 channels, four stores.
PK_KERNEL void upsample_nearest2x_nhwc(Tensor<bf16, 3> x, Tensor<bf16, 4> y) {
  for (auto [bh, w, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64})) {
    auto t = reshape<1, 16, 1, 64>(load<1, 16, 64>(x, bh, w, c));
    store(y, t, bh * 2, w, 0, c);
    store(y, t, bh * 2, w, 1, c);
    store(y, t, bh * 2 + 1, w, 0, c);
    store(y, t, bh * 2 + 1, w, 1, c);
  }
}

// 16. Bilinear 2x upsampling, align_corners = False (torch F.interpolate(scale_factor=2, mode="bilinear")),
// channels-last: x f32 [B, H, W, C] passed as [B H, W, C] with `hgt` = H; y f32 [B, 2H, 2W, C] passed as
// [B H 2, W, 2, C] as in 15. Source coordinates clamp at the edges, so along each axis
// out[2k] = 0.75 in[k] + 0.25 in[max(k - 1, 0)], out[2k + 1] = 0.75 in[k] + 0.25 in[min(k + 1, n - 1)]:
// y[(b H + h) 2 + i, w, j, c] = sum over the row weights (i) and column weights (j) of those four rows / columns.
// Rows clamp by index arithmetic (max / min of h inside the sample); columns by masks at w = 0 and w = W - 1
// (the loads at w - 1 and w + 1 read zeros there, replaced by the centre column).
PK_KERNEL void upsample_bilinear2x_nhwc(Tensor<f32, 3> x, Tensor<f32, 4> y, index hgt) {
  index wd = x.dim(1);
  for (auto [bh, w, c] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 16, 64})) {
    index b = bh / hgt;
    index h = bh % hgt;
    index up = b * hgt + max(h - 1, 0);
    index dn = b * hgt + min(h + 1, hgt - 1);
    auto col = dim_index<1, 1, 16, 64>(w);
    auto first = col < 0.5f;
    auto last = col > float(wd) - 1.5f;
    // rows: r0 = row for i = 0 (0.75 centre + 0.25 up), r1 = row for i = 1 (0.75 centre + 0.25 down), at w-1, w, w+1
    auto c0 = load<1, 16, 64>(x, bh, w, c);
    auto l0 = where(first, c0, load<1, 16, 64>(x, bh, w - 1, c));
    auto g0 = where(last, c0, load<1, 16, 64>(x, bh, w + 1, c));
    auto cu = load<1, 16, 64>(x, up, w, c);
    auto lu = where(first, cu, load<1, 16, 64>(x, up, w - 1, c));
    auto gu = where(last, cu, load<1, 16, 64>(x, up, w + 1, c));
    auto cd = load<1, 16, 64>(x, dn, w, c);
    auto ld = where(first, cd, load<1, 16, 64>(x, dn, w - 1, c));
    auto gd = where(last, cd, load<1, 16, 64>(x, dn, w + 1, c));
    auto rc0 = c0 * 0.75f + cu * 0.25f;
    auto rl0 = l0 * 0.75f + lu * 0.25f;
    auto rg0 = g0 * 0.75f + gu * 0.25f;
    auto rc1 = c0 * 0.75f + cd * 0.25f;
    auto rl1 = l0 * 0.75f + ld * 0.25f;
    auto rg1 = g0 * 0.75f + gd * 0.25f;
    store(y, reshape<1, 16, 1, 64>(rc0 * 0.75f + rl0 * 0.25f), bh * 2, w, 0, c);
    store(y, reshape<1, 16, 1, 64>(rc0 * 0.75f + rg0 * 0.25f), bh * 2, w, 1, c);
    store(y, reshape<1, 16, 1, 64>(rc1 * 0.75f + rl1 * 0.25f), bh * 2 + 1, w, 0, c);
    store(y, reshape<1, 16, 1, 64>(rc1 * 0.75f + rg1 * 0.25f), bh * 2 + 1, w, 1, c);
  }
}

// 17. Channels-first to channels-last with the dtype change of a VAE decoder output: x f32 [B, C, HW];
// y bf16 [B, HW, C]: y[b, p, c] = bf16(x[b, c, p]). 32 x 64 tiles transposed.
PK_KERNEL void nchw_to_nhwc(Tensor<f32, 3> x, Tensor<bf16, 3> y) {
  for (auto [b, c, p] : tiles(x.dim(0), x.dim(1), x.dim(2), {1, 32, 64})) {
    auto t = load<32, 64>(x, b, c, p);
    store(y, cast<bf16>(transpose(t)), b, p, c);
  }
}

// 18. Image preprocessing for a CLIP / ViT encoder: pixels i32 [B, HW, 3] (RGB bytes, channels-last);
// mean, std f32 [3]; y bf16 [B, 3, HW] (channels-first): y[b, c, p] = bf16((pixels[b, p, c] / 255 - mean[c]) / std[c]).
// A [64, 3] tile transposed to [3, 64].
PK_KERNEL void preprocess_rgb_to_nchw(Tensor<i32, 3> pixels, Tensor<f32, 1> mean, Tensor<f32, 1> std, Tensor<bf16, 3> y) {
  for (auto [b, p] : tiles(pixels.dim(0), pixels.dim(1), {1, 64})) {
    auto t = transpose(cast<f32>(load<64, 3>(pixels, b, p, 0)));
    auto v = (t * (1.0f / 255.0f) - load<3, 1>(mean, 0)) / load<3, 1>(std, 0);
    store(y, cast<bf16>(v), b, 0, p);
  }
}

// 19. Depthwise 3x3 convolution (ConvNeXt's 7x7 in spirit, MobileNet / UNet depthwise), zero padding 1, stride 1,
// channels-last: x bf16 [B, H, W, C]; k f32 [9, C] (tap (dy, dx) at row 3 dy + dx); bias f32 [C];
// y bf16 [B, H, W, C]: y[b, h, w, c] = bf16(bias[c] + sum_{dy, dx in 0..2} k[3 dy + dx, c] x[b, h + dy - 1, w + dx - 1, c])
// with x outside [0, H) x [0, W) read as 0 (a 4-D load at h - 1 = -1 or w - 1 = -1 reads zeros before the start,
// at H or W past the end: within the sample, as the tile is of the trailing dimensions at b).
PK_KERNEL void depthwise_conv3x3_nhwc(Tensor<bf16, 4> x, Tensor<f32, 2> k, Tensor<f32, 1> bias, Tensor<bf16, 4> y) {
  for (auto [bh, w, c] : tiles(x.dim(0) * x.dim(1), x.dim(2), x.dim(3), {1, 32, 64})) {
    index b = bh / x.dim(1);
    index h = bh % x.dim(1);
    auto acc = zeros<f32, 32, 64>() + load<1, 64>(bias, c);
    for (auto dy : range(0, 3, 1)) {
      for (auto dx : range(0, 3, 1)) {
        auto t = cast<f32>(load<32, 64>(x, b, h + dy - 1, w + dx - 1, c));
        acc = acc + t * load<1, 64>(k, dy * 3 + dx, c);
      }
    }
    store(y, cast<bf16>(acc), b, h, w, c);
  }
}

// 20. Dense 3x3 convolution as an implicit GEMM (the UNet ResBlock conv), zero padding 1, channels-last:
// x bf16 [B, H, W, Ci]; wt bf16 [9, Ci, Co] (tap 3 dy + dx, stored [K, N]); bias f32 [1, Co];
// y bf16 [B, H, W, Co]: y[b, h, w, o] = bf16(bias[o] + sum_{dy, dx, i} x[b, h + dy - 1, w + dx - 1, i] wt[3 dy + dx, i, o]),
// out-of-image taps 0. Each tile: 64 pixels of one image row by 64 output channels; K = 9 taps x Ci in steps of 32.
PK_KERNEL void conv3x3_implicit_gemm_nhwc(Tensor<bf16, 4> x, Tensor<bf16, 3> wt, Tensor<f32, 2> bias, Tensor<bf16, 4> y) {
  for (auto [bh, w, o] : tiles(x.dim(0) * x.dim(1), x.dim(2), wt.dim(2), {1, 64, 64})) {
    index b = bh / x.dim(1);
    index h = bh % x.dim(1);
    auto acc = zeros<f32, 64, 64>();
    for (auto tap : range(0, 9, 1)) {
      index dy = tap / 3;
      index dx = tap % 3;
      for (auto i : range(0, x.dim(3), 32))
        acc = mma(load<64, 32>(x, b, h + dy - 1, w + dx - 1, i), load<32, 64>(wt, tap, i, o), acc);
    }
    store(y, cast<bf16>(acc + load<1, 64>(bias, 0, o)), b, h, w, o);
  }
}

// ============================================================================ Positions and attention over image tokens

// 21. 2-D (axial) rotary embedding of image tokens in place (FLUX / ViT-RoPE style, rotate-half pairs): q bf16
// [T, H, 64] with T = hp * wp tokens in raster order, token t at row y = t / wp, column x = t % wp. Head dim 64:
// dims 0..31 rotate by y, dims 32..63 by x; within each half of 32, pair (j, j + 16), j < 16, at angle
// pos * theta^(-j / 16): out[j] = a cos - b sin, out[j + 16] = b cos + a sin (a = q[j], b = q[j + 16]).
// Each (16 tokens, one head) tile reads and rewrites its own four 16-column quarters.
PK_KERNEL void rope_2d_axial_inplace(Tensor<bf16, 3> q, index wp, float theta) {
  float lt = log(theta) / 16.0f;
  for (auto [t, h] : tiles(q.dim(0), q.dim(1), {16, 1})) {
    auto tok = cast<i32>(dim_index<0, 16, 1, 16>(t));
    auto py = cast<f32>(tok / wp);
    auto px = cast<f32>(tok % wp);
    auto inv = exp(dim_index<2, 16, 1, 16>(0) * (-lt));
    auto ay = py * inv;
    auto ax = px * inv;
    auto a0 = cast<f32>(load<16, 1, 16>(q, t, h, 0));
    auto b0 = cast<f32>(load<16, 1, 16>(q, t, h, 16));
    auto a1 = cast<f32>(load<16, 1, 16>(q, t, h, 32));
    auto b1 = cast<f32>(load<16, 1, 16>(q, t, h, 48));
    store(q, cast<bf16>(a0 * cos(ay) - b0 * sin(ay)), t, h, 0);
    store(q, cast<bf16>(b0 * cos(ay) + a0 * sin(ay)), t, h, 16);
    store(q, cast<bf16>(a1 * cos(ax) - b1 * sin(ax)), t, h, 32);
    store(q, cast<bf16>(b1 * cos(ax) + a1 * sin(ax)), t, h, 48);
  }
}

// 22. Text-conditioning cross-attention of a UNet / PixArt block: q bf16 [H, S, 64] from the image tokens,
// k, v bf16 [H, L, 64] from the text encoder (L = 77 CLIP tokens or 120 T5 tokens: not a multiple of the tile),
// o bf16 [H, S, 64] = softmax(q k^T * scale) v per head, keys past L masked; no causal mask.
PK_KERNEL void text_cross_attention(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<bf16, 3> o,
                                    float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 23. Cross-attention to padded text with a key padding mask (T5 prompts of different lengths in one batch,
// PixArt-alpha): as 22 for one sample, with keep i32 [L] (1 for a real token, 0 for padding):
// scores of keys with keep[n] == 0 are -1e4 before the softmax (a fully padded prompt is not allowed).
PK_KERNEL void text_cross_attention_keymask(Tensor<bf16, 3> q, Tensor<bf16, 3> k, Tensor<bf16, 3> v, Tensor<i32, 1> keep,
                                            Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where((col_index<64, 64>(n) < k.dim(1)) && (cast<f32>(load<1, 64>(keep, n)) > 0.5f), s, -1e4f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 24. Joint image + text attention of an MM-DiT block (SD3): the image queries attend to the concatenation of
// image keys and text keys. qi bf16 [H, S, 64]; ki, vi bf16 [H, S, 64]; kt, vt bf16 [H, L, 64];
// o bf16 [H, S, 64] = softmax(qi [ki; kt]^T * scale) [vi; vt] per head. One online softmax over the image keys
// then the text keys (two range loops carrying the running max, sum and output).
PK_KERNEL void joint_attention_image_queries(Tensor<bf16, 3> qi, Tensor<bf16, 3> ki, Tensor<bf16, 3> vi,
                                             Tensor<bf16, 3> kt, Tensor<bf16, 3> vt, Tensor<bf16, 3> o, float scale) {
  for (auto [h, m] : tiles(qi.dim(0), qi.dim(1), {1, 64})) {
    auto qt = load<64, 64>(qi, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, ki.dim(1), 64)) {
      auto s = where(col_index<64, 64>(n) < ki.dim(1), mma_t(qt, load<64, 64>(ki, h, n, 0), zeros<f32, 64, 64>()) * scale, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vi, h, n, 0), acc * corr);
      mx = mnew;
    }
    for (auto n : range(0, kt.dim(1), 64)) {
      auto s = where(col_index<64, 64>(n) < kt.dim(1), mma_t(qt, load<64, 64>(kt, h, n, 0), zeros<f32, 64, 64>()) * scale, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vt, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 25. Swin (shifted) window attention on the general path, by gathered rows: q, k, v bf16 [B H W, C] (tokens in
// raster order per image, heads packed in columns, head dim 32, C = 32 heads), image hgt x wid (multiples of 7),
// windows of 7 x 7 = 49 tokens, cyclic shift `shift` (0 for W-MSA, 3 for SW-MSA); bias f32 [heads, 49, 49]
// (the relative-position bias already gathered); o bf16 [B H W, C].
// Window (b, wi, wj), its token r (0..48) at shifted coordinates (y', x') = (7 wi + r / 7, 7 wj + r % 7) is image
// token (b, (y' + shift) % hgt, (x' + shift) % wid) (torch.roll by -shift, then window_partition). Region label of
// a shifted coordinate: 0 below n - 7, 1 below n - shift, else 2 (per axis; label = 3 ly + lx). With shift > 0,
// scores between tokens of different labels get -100 added (Swin's attn_mask); with shift = 0 every label in a
// window is equal. o at the same image token = softmax(q k^T * scale + bias[h] + mask) v for head h; rows 49..63
// of the 64-row tiles are padding (their ids are -1: gathered as zeros, scattered nowhere).
PK_KERNEL void swin_window_attention(Tensor<bf16, 2> q, Tensor<bf16, 2> k, Tensor<bf16, 2> v, Tensor<f32, 3> bias,
                                     Tensor<bf16, 2> o, index hgt, index wid, index shift, float scale) {
  index nwh = hgt / 7;
  index nww = wid / 7;
  index per_img = nwh * nww;
  for (auto [win, h] : tiles(q.rows() / 49, bias.dim(0), {1, 1})) {
    index b = win / per_img;
    index wi = win % per_img / nww;
    index wj = win % nww;
    auto r = cast<i32>(row_index<64, 1>(0));
    auto ys = r / 7 + wi * 7;
    auto xs = r % 7 + wj * 7;
    auto ids = where(r < 49, ((ys + shift) % hgt + b * hgt) * wid + (xs + shift) % wid, -1);
    auto qt = load_rows<64, 32>(q, ids, h * 32);
    auto kt = load_rows<64, 32>(k, ids, h * 32);
    auto vt = load_rows<64, 32>(v, ids, h * 32);
    auto ly = where(ys < hgt - 7, 0, where(ys < hgt - shift, 1, 2));
    auto lx = where(xs < wid - 7, 0, where(xs < wid - shift, 1, 2));
    auto lab = cast<f32>(ly * 3 + lx);
    auto same = lab == transpose(lab);
    auto s = mma_t(qt, kt, zeros<f32, 64, 64>()) * scale + load<64, 64>(bias, h, 0, 0);
    s = s + where(same, 0.0f, -100.0f);
    s = where(col_index<64, 64>(0) < 49.0f, s, -1e30f);
    auto e = exp(s - row_max(s));
    auto p = e / row_sum(e);
    auto out = mma(cast<bf16>(p), vt, zeros<f32, 64, 32>());
    store_rows(o, cast<bf16>(out), ids, h * 32);
  }
}

// ============================================================================ Guidance and samplers

// 26. Classifier-free guidance combine: eps bf16 [2, N] (row 0 the conditional prediction, row 1 the
// unconditional, as the doubled batch is flattened per half); out bf16 [1, N]:
// out[0, i] = bf16(u + w (c - u)) with c = eps[0, i], u = eps[1, i] in fp32.
PK_KERNEL void cfg_combine(Tensor<bf16, 2> eps, Tensor<bf16, 2> out, float w) {
  for (auto n : tiles(eps.cols(), {2048})) {
    auto c = cast<f32>(load<1, 2048>(eps, 0, n));
    auto u = cast<f32>(load<1, 2048>(eps, 1, n));
    store(out, cast<bf16>(u + (c - u) * w), 0, n);
  }
}

// 27. CFG with guidance rescale (Lin et al. 2023, diffusers rescale_noise_cfg): cond, uncond f32 [B, N] (one row
// per sample, N = C H W); out f32 [B, N]. g = u + w (c - u); std_x = sqrt(sum_i (x_i - mean x)^2 / (N - 1)) per row
// (torch.std, unbiased); out = phi * g * (std_c / std_g) + (1 - phi) * g. Two passes over 1024-column chunks
// (sums and sums of squares of c and g), then the store pass.
PK_KERNEL void cfg_rescale(Tensor<f32, 2> cond, Tensor<f32, 2> uncond, Tensor<f32, 2> out, float w, float phi) {
  float n = float(cond.cols());
  for (auto b : tiles(cond.rows(), {1})) {
    auto sc = zeros<f32, 1, 1>();
    auto qc = zeros<f32, 1, 1>();
    auto sg = zeros<f32, 1, 1>();
    auto qg = zeros<f32, 1, 1>();
    for (auto k : range(0, cond.cols(), 1024)) {
      auto c = load<1, 1024>(cond, b, k);
      auto g = load<1, 1024>(uncond, b, k) + (c - load<1, 1024>(uncond, b, k)) * w;
      sc = sc + row_sum(c);
      qc = qc + row_sum(c * c);
      sg = sg + row_sum(g);
      qg = qg + row_sum(g * g);
    }
    auto vc = (qc - sc * sc / n) / (n - 1.0f);
    auto vg = (qg - sg * sg / n) / (n - 1.0f);
    auto ratio = sqrt(vc) / sqrt(vg);
    for (auto k : range(0, cond.cols(), 1024)) {
      auto u = load<1, 1024>(uncond, b, k);
      auto g = u + (load<1, 1024>(cond, b, k) - u) * w;
      store(out, g * ratio * phi + g * (1.0f - phi), b, k);
    }
  }
}

// 28. DDIM step with per-sample timesteps (eta > 0 adds noise): x, eps f32 [B, N]; abar f32 [1000] (alphas_cumprod);
// t, tp i32 [B] (current and previous timestep per sample; tp < 0 means the final step, abar_prev = 1);
// xo f32 [B, N]. With a = abar[t[b]], ap = (tp[b] >= 0 ? abar[tp[b]] : 1):
// sigma = eta sqrt((1 - ap) / (1 - a)) sqrt(1 - a / ap);
// x0 = (x - sqrt(1 - a) eps) / sqrt(a);
// xo = sqrt(ap) x0 + sqrt(1 - ap - sigma^2) eps + sigma z, z standard normal from uniform(seed) by Box-Muller
// (z = sqrt(-2 ln(1 - u1)) cos(2 pi u2), u1 and u2 drawn with seeds `seed` and `seed + 1` at the element).
PK_KERNEL void ddim_step(Tensor<f32, 2> x, Tensor<f32, 2> eps, Tensor<f32, 1> abar, Tensor<i32, 1> t, Tensor<i32, 1> tp,
                         Tensor<f32, 2> xo, float eta, index seed) {
  for (auto [b, n] : tiles(x.rows(), x.cols(), {1, 2048})) {
    float a = abar.at(t.at(b));
    index tpb = tp.at(b);
    float ap = abar.at(max(tpb, 0));
    float last = float(min(max(tpb + 1, 0), 1));
    ap = ap * last + (1.0f - last);
    float sigma = eta * sqrt((1.0f - ap) / (1.0f - a)) * sqrt(1.0f - a / ap);
    auto xt = load<1, 2048>(x, b, n);
    auto e = load<1, 2048>(eps, b, n);
    auto x0 = (xt - e * sqrt(1.0f - a)) * rsqrt(a);
    auto u1 = uniform<1, 2048>(seed, b, n);
    auto u2 = uniform<1, 2048>(seed + 1, b, n);
    auto z = sqrt(log(1.0f - u1) * -2.0f) * cos(u2 * 6.283185307f);
    store(xo, x0 * sqrt(ap) + e * sqrt(max(1.0f - ap - sigma * sigma, 0.0f)) + z * sigma, b, n);
  }
}

// 29. Euler-ancestral step (k-diffusion sample_euler_ancestral) in place: x f32 [B, N], den f32 [B, N] (the
// denoised prediction), sigmas f32 [S + 1], step i (index): s = sigmas[i], s2 = sigmas[i + 1];
// su = min(s2, sqrt(s2^2 (s^2 - s2^2) / s^2)), sd = sqrt(s2^2 - su^2);
// x := x + (x - den) / s * (sd - s) + su * z, z standard normal as in 28 from `seed`.
PK_KERNEL void euler_ancestral_step(Tensor<f32, 2> x, Tensor<f32, 2> den, Tensor<f32, 1> sigmas, index i, index seed) {
  float s = sigmas.at(i);
  float s2 = sigmas.at(i + 1);
  float su = min(s2, sqrt(s2 * s2 * (s * s - s2 * s2) / (s * s)));
  float sd = sqrt(s2 * s2 - su * su);
  for (auto [b, n] : tiles(x.rows(), x.cols(), {4, 1024})) {
    auto xt = load<4, 1024>(x, b, n);
    auto d = (xt - load<4, 1024>(den, b, n)) / s;
    auto u1 = uniform<4, 1024>(seed, b, n);
    auto u2 = uniform<4, 1024>(seed + 1, b, n);
    auto z = sqrt(log(1.0f - u1) * -2.0f) * cos(u2 * 6.283185307f);
    store(x, xt + d * (sd - s) + z * su, b, n);
  }
}

// 30. Rectified-flow Euler step with CFG (SD3 / FLUX sampling) in place: x bf16 [B, N] latent; v bf16 [2 B, N]
// (rows 0..B-1 conditional velocity, rows B..2B-1 unconditional); t, tn f32 [B] (per-sample current and next time):
// x[b] := bf16(x[b] + (tn[b] - t[b]) * (vu + w (vc - vu))) with vc = v[b], vu = v[B + b].
PK_KERNEL void flow_euler_cfg_step(Tensor<bf16, 2> x, Tensor<bf16, 2> v, Tensor<f32, 1> t, Tensor<f32, 1> tn, float w) {
  index bsz = x.rows();
  for (auto [b, n] : tiles(x.rows(), x.cols(), {8, 512})) {
    auto vc = cast<f32>(load<8, 512>(v, b, n));
    auto vu = cast<f32>(load<8, 512>(v, bsz + b, n));
    auto dt = load<8, 1>(tn, b) - load<8, 1>(t, b);
    store(x, cast<bf16>(cast<f32>(load<8, 512>(x, b, n)) + dt * (vu + (vc - vu) * w)), b, n);
  }
}

// 31. VAE encoder reparameterisation with the KL term: moments f32 [B, 2, N] (mean at [b, 0, :], logvar at
// [b, 1, :], N = C H W; diagonal Gaussian as in ldm's DiagonalGaussianDistribution); lv = clamp(logvar, -30, 20);
// z bf16 [B, N] = bf16((mean + exp(0.5 lv) n) * sf), n standard normal from `seed` as in 28 at (b, i), sf the
// latent scaling factor (0.18215); kl f32 [B, 1] = 0.5 sum_i (mean^2 + exp(lv) - 1 - lv), zeroed by the kernel
// then added by tiles.
PK_KERNEL void vae_reparam_kl(Tensor<f32, 3> moments, Tensor<bf16, 2> z, Tensor<f32, 2> kl, index seed, float sf) {
  for (auto b : tiles(kl.rows(), {64})) store(kl, zeros<f32, 64, 1>(), b, 0);
  for (auto [b, n] : tiles(z.rows(), z.cols(), {1, 1024})) {
    auto mu = load<1, 1024>(moments, b, 0, n);
    auto lv = min(max(load<1, 1024>(moments, b, 1, n), -30.0f), 20.0f);
    auto u1 = uniform<1, 1024>(seed, b, n);
    auto u2 = uniform<1, 1024>(seed + 1, b, n);
    auto nz = sqrt(log(1.0f - u1) * -2.0f) * cos(u2 * 6.283185307f);
    store(z, cast<bf16>((mu + exp(lv * 0.5f) * nz) * sf), b, n);
    auto term = where(col_index<1, 1024>(n) < z.cols(), mu * mu + exp(lv) - 1.0f - lv, 0.0f);
    store_add(kl, row_sum(term) * 0.5f, b, 0);
  }
}

// 32. Diffusion training: forward noising and the min-SNR-weighted epsilon loss (Hang et al. 2023, gamma = 5).
// x0, noise, pred f32 [B, N]; abar f32 [1000]; t i32 [B]; xt f32 [B, N] = sqrt(a) x0 + sqrt(1 - a) noise with
// a = abar[t[b]]; loss f32 [B, 1] = min(snr, 5) / snr * mean_i (pred - noise)^2 with snr = a / (1 - a)
// (xt is the model input; pred is from the previous step's model call, so both happen in one pass here).
PK_KERNEL void diffusion_noise_minsnr_loss(Tensor<f32, 2> x0, Tensor<f32, 2> noise, Tensor<f32, 2> pred,
                                           Tensor<f32, 1> abar, Tensor<i32, 1> t, Tensor<f32, 2> xt, Tensor<f32, 2> loss) {
  for (auto b : tiles(loss.rows(), {64})) store(loss, zeros<f32, 64, 1>(), b, 0);
  float inv_n = 1.0f / float(x0.cols());
  for (auto [b, n] : tiles(x0.rows(), x0.cols(), {1, 2048})) {
    float a = abar.at(t.at(b));
    float snr = a / (1.0f - a);
    float wgt = min(snr, 5.0f) / snr;
    auto nz = load<1, 2048>(noise, b, n);
    store(xt, load<1, 2048>(x0, b, n) * sqrt(a) + nz * sqrt(1.0f - a), b, n);
    auto d = load<1, 2048>(pred, b, n) - nz;
    store_add(loss, row_sum(d * d) * (wgt * inv_n), b, 0);
  }
}

// ============================================================================ More layouts

// 33. ViT token assembly: the class token prepended and the positional embedding added. patches bf16 [B, T, D]
// (from 11 without pos), cls bf16 [1, D], pos bf16 [T + 1, D]; x bf16 [B, T + 1, D]:
// x[b, 0, :] = cls + pos[0]; x[b, 1 + t, :] = patches[b, t, :] + pos[1 + t] (sums in fp32, rounded once).
PK_KERNEL void vit_tokens_cls_pos(Tensor<bf16, 3> patches, Tensor<bf16, 2> cls, Tensor<bf16, 2> pos, Tensor<bf16, 3> x) {
  for (auto [b, d] : tiles(x.dim(0), x.dim(2), {1, 256}))
    store(x, cast<bf16>(cast<f32>(load<1, 256>(cls, 0, d)) + cast<f32>(load<1, 256>(pos, 0, d))), b, 0, d);
  for (auto [b, t, d] : tiles(patches.dim(0), patches.dim(1), patches.dim(2), {1, 16, 256}))
    store(x, cast<bf16>(cast<f32>(load<16, 256>(patches, b, t, d)) + cast<f32>(load<16, 256>(pos, t + 1, d))), b, t + 1, d);
}

// 34. 2x2 average pooling (UNet Downsample without conv), channels-last: x f32 [B, H, W, C] passed as
// [B H/2, 2, W/2, 2 C] (H, W even); y f32 [B, H/2, W/2, C] passed as [B H/2, W/2, C]:
// y[bi, j, c] = (x[bi, 0, j, c] + x[bi, 0, j, C + c] + x[bi, 1, j, c] + x[bi, 1, j, C + c]) / 4.
PK_KERNEL void avg_pool2x2_nhwc(Tensor<f32, 4> x, Tensor<f32, 3> y) {
  index ch = y.dim(2);
  for (auto [bi, j, c] : tiles(y.dim(0), y.dim(1), y.dim(2), {1, 16, 64})) {
    auto s = load<1, 1, 16, 64>(x, bi, 0, j, c) + load<1, 1, 16, 64>(x, bi, 0, j, ch + c) +
             load<1, 1, 16, 64>(x, bi, 1, j, c) + load<1, 1, 16, 64>(x, bi, 1, j, ch + c);
    store(y, reshape<1, 16, 64>(s * 0.25f), bi, j, c);
  }
}

// 35. Decoded image to 8-bit pixels, channels-first f32 in [-1, 1] to channels-last bytes: x f32 [B, 3, HW];
// px i32 [B, HW, 3] = clamp(floor((x + 1) * 127.5 + 0.5), 0, 255) (round half up; the clamp comes first so the
// cast of a value in [0, 255.5] truncates like floor).
PK_KERNEL void image_to_uint8_nhwc(Tensor<f32, 3> x, Tensor<i32, 3> px) {
  for (auto [b, p] : tiles(x.dim(0), x.dim(2), {1, 128})) {
    auto v = min(max((load<3, 128>(x, b, 0, p) + 1.0f) * 127.5f + 0.5f, 0.0f), 255.0f);
    store(px, cast<i32>(transpose(v)), b, p, 0);
  }
}

// 36. DiT final layer's modulation (FinalLayer: LayerNorm, then shift / scale from a 2-chunk adaLN):
// x bf16 [B, T, D] (D <= 1152), mod bf16 [B, 2, D] (0 shift, 1 scale); y bf16 [B, T, D] =
// bf16(LN(x) * (1 + scale[b]) + shift[b]), LN without affine, eps 1e-6. The statistics by the two-pass form
// (mean, then the mean of squared deviations) with the padding masked; the linear that follows is a plain GEMM.
PK_KERNEL void dit_final_modulate(Tensor<bf16, 3> x, Tensor<bf16, 3> mod, Tensor<bf16, 3> y) {
  float inv_d = 1.0f / float(x.dim(2));
  for (auto [b, t] : tiles(x.dim(0), x.dim(1), {1, 8})) {
    auto xt = cast<f32>(load<8, 1152>(x, b, t, 0));
    auto d = where(col_index<8, 1152>(0) < x.dim(2), xt - row_sum(xt) * inv_d, 0.0f);
    auto h = d * rsqrt(row_sum(d * d) * inv_d + 1e-6f);
    store(y, cast<bf16>(h * (cast<f32>(load<1, 1152>(mod, b, 1, 0)) + 1.0f) + cast<f32>(load<1, 1152>(mod, b, 0, 0))), b, t, 0);
  }
}

// ============================================================================ Across ranks

// 37. CLIP contrastive loss with embeddings gathered from every rank (open_clip's gather_with_grad=False,
// local_loss=False): img, txt bf16 [n, 512] this rank's batch (any n; n the same on every rank); ni, nt Sym bf16
// [n, 512] = the L2-normalised rows (x / max(||x||, 1e-12)); gi, gt Sym bf16 [W n, 512] = all_gather of ni, nt
// (rank r's rows at r n); logits_i[i, j] = s <ni[i], gt[j]>, logits_t[i, j] = s <nt[i], gi[j]> for j < W n,
// s = logit_scale (already exp'd); target column r n + i. li, lt f32 [n, 1]: li[i] = logsumexp_j logits_i[i, j] -
// logits_i[i, r n + i], lt likewise (the loss is (mean li + mean lt) / 2, summed by the caller across ranks).
// The logsumexp is online over 64-column chunks of the gathered batch.
PK_KERNEL void clip_contrastive_loss(Tensor<bf16, 2> img, Tensor<bf16, 2> txt, Sym<bf16, 2> ni, Sym<bf16, 2> nt,
                                     Sym<bf16, 2> gi, Sym<bf16, 2> gt, Tensor<f32, 2> li, Tensor<f32, 2> lt, float s) {
  for (auto m : tiles(img.rows(), {16})) {
    auto a = cast<f32>(load<16, 512>(img, m, 0));
    store(ni, cast<bf16>(a / max(sqrt(row_sum(a * a)), 1e-12f)), m, 0);
    auto b = cast<f32>(load<16, 512>(txt, m, 0));
    store(nt, cast<bf16>(b / max(sqrt(row_sum(b * b)), 1e-12f)), m, 0);
  }
  all_gather(ni, gi);
  all_gather(nt, gt);
  index off = rank() * img.rows();
  for (auto m : tiles(img.rows(), {16})) {
    auto qi = load<16, 512>(ni, m, 0);
    auto qt = load<16, 512>(nt, m, 0);
    auto mi = zeros<f32, 16, 1>() - 1e30f;
    auto si = zeros<f32, 16, 1>();
    auto mt = zeros<f32, 16, 1>() - 1e30f;
    auto st = zeros<f32, 16, 1>();
    auto ti = zeros<f32, 16, 1>();
    auto tt = zeros<f32, 16, 1>();
    for (auto n : range(0, gi.rows(), 64)) {
      auto valid = col_index<16, 64>(n) < gi.rows();
      auto tgt = col_index<16, 64>(n) == row_index<16, 64>(m) + float(off);
      auto zi = where(valid, mma_t(qi, load<64, 512>(gt, n, 0), zeros<f32, 16, 64>()) * s, -1e30f);
      auto zt = where(valid, mma_t(qt, load<64, 512>(gi, n, 0), zeros<f32, 16, 64>()) * s, -1e30f);
      ti = ti + row_sum(where(tgt, zi, 0.0f));
      tt = tt + row_sum(where(tgt, zt, 0.0f));
      auto mi2 = max(mi, row_max(zi));
      si = si * exp(mi - mi2) + row_sum(exp(zi - mi2));
      mi = mi2;
      auto mt2 = max(mt, row_max(zt));
      st = st * exp(mt - mt2) + row_sum(exp(zt - mt2));
      mt = mt2;
    }
    store(li, mi + log(si) - ti, m, 0);
    store(lt, mt + log(st) - tt, m, 0);
  }
}

// 38. Patch-parallel depthwise 3x3 conv with halo rows exchanged between neighbouring ranks (DistriFusion /
// xDiT patch parallelism over image rows): rank r holds image rows [r hl, (r + 1) hl) of one image, channels-last,
// in x Sym bf16 [hl + 2, W, C]: rows 1..hl are its own rows (written by the caller), row 0 is the halo above and row
// hl + 1 the halo below. First each rank stores its first own row into the previous rank's row hl + 1 and its
// last own row into the next rank's row 0 (ring neighbours: rank 0's top halo then holds rank W-1's last row, and
// rank W-1's bottom halo rank 0's first row; the image edges are zero, so those halos are multiplied by 0 below).
// Then y bf16 [hl, W, C]: y[h, w, c] = bf16(bias[c] + sum_{dy, dx} k[3 dy + dx, c] xe[h + dy, w + dx - 1, c]) with
// xe = x except xe[0] = 0 on rank 0 and xe[hl + 1] = 0 on rank W - 1; columns outside [0, W) are 0. k f32 [9, C],
// bias f32 [C]. (W = 1: both halos are the rank's own rows and both are zeroed.)
PK_KERNEL void patch_parallel_dwconv_halo(Sym<bf16, 3> x, Tensor<f32, 2> k, Tensor<f32, 1> bias, Tensor<bf16, 3> y) {
  index hl = y.dim(0);
  for (auto [w, c] : tiles(x.dim(1), x.dim(2), {32, 64})) {
    store(x.on(prev_rank()), load<32, 64>(x, 1, w, c), hl + 1, w, c);
    store(x.on(next_rank()), load<32, 64>(x, hl, w, c), 0, w, c);
  }
  float top = float(min(rank(), 1));
  float bot = float(min(world_size() - 1 - rank(), 1));
  for (auto [h, w, c] : tiles(hl, x.dim(1), x.dim(2), {1, 32, 64})) {
    auto acc = zeros<f32, 32, 64>() + load<1, 64>(bias, c);
    for (auto dy : range(0, 3, 1)) {
      index r = h + dy;
      float up = float(min(r, 1)), down = float(min(hl + 1 - r, 1));  // 0 at the top / bottom halo
      float keep = (up + (1.0f - up) * top) * (down + (1.0f - down) * bot);
      for (auto dx : range(0, 3, 1))
        acc = acc + cast<f32>(load<32, 64>(x, r, w + dx - 1, c)) * keep * load<1, 64>(k, dy * 3 + dx, c);
    }
    store(y, cast<bf16>(acc), h, w, c);
  }
}

// 39. Patch-parallel GroupNorm (DistriFusion's synchronised statistics): each rank holds a slice of the pixels of
// every (sample, group): x f32 [B G, 8, P] (8 channels per group, P pixels on this rank; P the same on every rank);
// st Sym f32 [B G, 2] = this rank's (sum, sum of squares) per row, then all-reduced in place; y f32 [B G, 8, P] =
// (x - mean) rsqrt(var + eps) with mean = sum / (8 P W), var = sumsq / (8 P W) - mean^2 over all ranks.
PK_KERNEL void patch_parallel_group_norm(Tensor<f32, 3> x, Sym<f32, 2> st, Tensor<f32, 3> y, float eps) {
  for (auto bg : tiles(x.dim(0), {1})) {
    auto s = zeros<f32, 1, 1>();
    auto ss = zeros<f32, 1, 1>();
    for (auto p : range(0, x.dim(2), 512)) {
      auto t = load<8, 512>(x, bg, 0, p);
      s = s + row_sum(transpose(row_sum(t)));
      ss = ss + row_sum(transpose(row_sum(t * t)));
    }
    store(st, s, bg, 0);
    store(st, ss, bg, 1);
  }
  all_reduce(Sum, st, st);
  float inv_n = 1.0f / float(x.dim(1) * x.dim(2) * world_size());
  for (auto [bg, p] : tiles(x.dim(0), x.dim(2), {1, 512})) {
    auto mean = load<1, 1>(st, bg, 0) * inv_n;
    auto rstd = rsqrt(load<1, 1>(st, bg, 1) * inv_n - mean * mean + eps);
    store(y, (load<8, 512>(x, bg, 0, p) - mean) * rstd, bg, 0, p);
  }
}

// 40. Patch-parallel attention with all-gathered K / V (xDiT's sequence split of image tokens without Ulysses):
// q bf16 [H, s, 64] this rank's s query tokens; k, v Sym bf16 [H, s, 64] this rank's keys / values; kf, vf Sym bf16
// [H, W s, 64] = all_gather along dimension 1 (rank r's tokens at r s); o bf16 [H, s, 64] =
// softmax(q kf^T * scale) vf per head (no mask: every image token sees every other).
PK_KERNEL void patch_parallel_attention_kv_gather(Tensor<bf16, 3> q, Sym<bf16, 3> k, Sym<bf16, 3> v, Sym<bf16, 3> kf,
                                                  Sym<bf16, 3> vf, Tensor<bf16, 3> o, float scale) {
  all_gather(k, kf, 1);
  all_gather(v, vf, 1);
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, kf.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(kf, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < kf.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vf, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 41. Tensor-parallel DiT MLP (Megatron column- then row-parallel, GELU tanh): x bf16 [T, D] replicated (the
// adaLN-modulated input); w1 bf16 [D, F/W] this rank's column shard, b1 bf16 [1, F/W]; h bf16 [T, F/W] =
// bf16(gelu(x w1 + b1)); w2 bf16 [F/W, D] this rank's row shard; part Scratch bf16 [T, D] = bf16(h w2) (workspace);
// out Sym bf16 [T, D] = sum over ranks of part (the all-reduce; the row-parallel bias and the gated residual
// follow in 5).
PK_KERNEL void tp_dit_mlp(Tensor<bf16, 2> x, Tensor<bf16, 2> w1, Tensor<bf16, 2> b1, Tensor<bf16, 2> h,
                          Tensor<bf16, 2> w2, Scratch<bf16, 2> part, Sym<bf16, 2> out) {
  for (auto [m, n] : tiles(x.rows(), w1.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, x.cols(), 64)) acc = mma(load<128, 64>(x, m, k), load<64, 256>(w1, k, n), acc);
    store(h, cast<bf16>(gelu(acc + cast<f32>(load<1, 256>(b1, 0, n)))), m, n);
  }
  for (auto [m, n] : tiles(h.rows(), w2.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma(load<128, 64>(h, m, k), load<64, 256>(w2, k, n), acc);
    store(part, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, part, out);
}

// 42. Sequence-parallel text conditioning: each rank holds L/W text tokens' keys and values (the text encoder run
// sequence-parallel); kt, vt Sym bf16 [H, L/W, 64] -> ktf, vtf bf16 local [H, L, 64] by all_gather along dimension 1;
// then image queries q bf16 [H, S, 64] (this rank's image tokens) cross-attend to the whole text as in 22:
// o bf16 [H, S, 64].
PK_KERNEL void sp_text_cross_attention(Tensor<bf16, 3> q, Sym<bf16, 3> kt, Sym<bf16, 3> vt, Tensor<bf16, 3> ktf,
                                       Tensor<bf16, 3> vtf, Tensor<bf16, 3> o, float scale) {
  all_gather(kt, ktf, 1);
  all_gather(vt, vtf, 1);
  for (auto [h, m] : tiles(q.dim(0), q.dim(1), {1, 64})) {
    auto qt = load<64, 64>(q, h, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, ktf.dim(1), 64)) {
      auto s = mma_t(qt, load<64, 64>(ktf, h, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < ktf.dim(1), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(vtf, h, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), h, m, 0);
  }
}

// 43. The row-parallel half of 41 alone (attention output projection of a TP DiT block): h bf16 [T, F/W],
// w2 bf16 [F/W, D]; part Scratch bf16 [T, D] = bf16(h w2); out Sym bf16 [T, D] = sum over ranks of part.
PK_KERNEL void tp_row_linear_allreduce(Tensor<bf16, 2> h, Tensor<bf16, 2> w2, Scratch<bf16, 2> part, Sym<bf16, 2> out) {
  for (auto [m, n] : tiles(h.rows(), w2.cols(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, h.cols(), 64)) acc = mma(load<128, 64>(h, m, k), load<64, 256>(w2, k, n), acc);
    store(part, cast<bf16>(acc), m, n);
  }
  all_reduce(Sum, part, out);
}
