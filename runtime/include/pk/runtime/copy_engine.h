// The copy-engine route of the copy-only collectives (all-gather, all-to-all, broadcast, gather,
// scatter): for large messages the host issues copy-engine pulls between two one-way flag
// rounds, instead of launching the kernel, so no SM time goes into moving bytes. pkc decides
// per kernel whether a collective may take it and from which message size (rule 1), and
// writes that on the kernel's `// pk-launch` line as
//   copy_engine=<collective>:<min message bytes>:<x argument>:<y argument>:<root argument|-1>
// Every launcher (pkc's typed launchers, the JIT, the benchmark) goes through this file.
#pragma once
#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include <pk/runtime/status.h>

namespace pk {

class Context;

enum class CopyCollective { all_gather, all_to_all, broadcast, gather, scatter };

const char* copy_collective_name(CopyCollective c);

struct CopyEngineRoute {
  CopyCollective kind = CopyCollective::all_gather;
  long long min_bytes = 0;    // smallest message (bytes one rank sends one peer) that takes it
  int x = -1, y = -1;         // argument indices of the input (symmetric) and the output
  int root = -1;              // argument index of the root, -1 for unrooted collectives
};

// The route on one `// pk-launch` line: nullopt when the line has none, an error when the
// field is malformed.
Result<std::optional<CopyEngineRoute>> parse_copy_engine_route(const std::string& launch_line);

// Bytes one rank's message to one peer holds, from the element counts of x and y.
long long copy_engine_message_bytes(CopyCollective c, long long x_numel, long long y_numel,
                                    int world, int element_bytes);

// Whether a launch with messages of `message_bytes` takes the route on ctx (the context's
// ContextOptions::copy_engine_min_bytes overrides the kernel's threshold). Every rank decides
// the same way, since sizes and options are equal on every rank.
bool takes_copy_engine(const Context& ctx, const CopyEngineRoute& route, long long message_bytes);

// Runs collective `kind` on ctx for `kernel` (its own flag region, "<kernel>/copy_engine"):
//   1. a one-block kernel signals every peer "my input is ready" and waits for theirs;
//   2. copy-engine pulls from the peers' inputs straight into this rank's output (the local
//      part on a second stream, so both copy engines run at once);
//   3. the one-block kernel again: "I have finished reading your input", and waits for that
//      from every peer, so no rank overwrites an input a peer still reads.
// x_peers: every rank's input (symmetric); y: this rank's output; root for rooted collectives.
// Waits are bounded like every pk wait; Context::check_errors() reports a timeout.
Status copy_engine_collective(Context& ctx, const std::string& kernel, CopyCollective kind,
                              void* const* x_peers, void* y, long long message_bytes,
                              long long root, cudaStream_t stream);

// The CUDA of the route's one-block sync kernel (NVRTC-compiled at the route's first use).
const char* copy_engine_sync_source();

}  // namespace pk
