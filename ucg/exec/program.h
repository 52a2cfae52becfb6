// SPDX-License-Identifier: BSD-3-Clause
// A lowered program: one rank's plan with every range turned into byte
// segments of concrete buffers, the dependency graph turned around (who
// waits for whom), and every point-to-point message given its own id. It
// is what the engine runs, with no allocation and no lookup per start.
#pragma once

#include "plan/plan.h"
#include "ucg/result.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ucg::exec {

/// The buffers an op reads or writes: the plan's three plus the staging
/// area where receives that cannot land in place wait (reduce, early).
enum class Buf : std::uint8_t { kInput, kOutput, kScratch, kStaging };
inline constexpr int kNumBufs = 4;

/// Bytes [offset, offset + length) of one buffer.
struct Segment {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    Buf buf = Buf::kInput;
};

/// Where the blocks of one of the plan's buffers lie (elements and bytes).
struct BufferLayout {
    std::vector<std::uint64_t> count;  ///< elements of each block
    std::vector<std::uint64_t> offset; ///< bytes from the buffer's start

    /// `nblocks` blocks of `count` elements, one after the other.
    static BufferLayout uniform(int nblocks, std::uint64_t count,
                                std::size_t elem_bytes);
    /// Blocks of `counts[b]` elements at `displs[b]` elements.
    static BufferLayout vector(const std::vector<std::uint64_t> &counts,
                               const std::vector<std::uint64_t> &displs,
                               std::size_t elem_bytes);
    /// Bytes from the start to the end of the last byte of any block (of
    /// the first `nblocks`).
    std::uint64_t extent(std::size_t elem_bytes,
                         std::size_t nblocks = SIZE_MAX) const;
};

/// The three buffers of one rank and the element size: what lowering needs
/// besides the plan.
struct Layout {
    std::size_t elem_bytes = 1; ///< chunk boundaries fall on elements
    BufferLayout input;
    BufferLayout output;
    /// Scratch blocks all hold `scratch_count` elements, unless
    /// `scratch` has blocks: then scratch block b is its block b (a
    /// reduce_scatter with counts, whose plans keep input block b in
    /// scratch block b), and a plan may use no more blocks than it has.
    std::uint64_t scratch_count = 0;
    BufferLayout scratch;
};

/// Flags of a lowered op.
enum OpFlags : std::uint8_t {
    kOpEarly = 1,    ///< receive posted at start into staging (0005 item 5)
    kOpStaged = 2,   ///< data goes through staging (reduce, scattered)
    kOpSrcFirst = 4, ///< reduce: dst = src (+) dst
};

/// Message ids between a pair of ranks, one way (LOp::msg_id): half the
/// wire tag's id field, whose top bit marks answers (engine.h).
inline constexpr std::uint32_t kMaxWireMessages = 1u << 19;

/// One op, lowered. Segment lists index Program::segs.
struct LOp {
    plan::OpKind kind = plan::OpKind::kCopy;
    plan::Channel channel = plan::Channel::kP2p;
    std::uint8_t flags = 0;
    std::int32_t peer = -1;   ///< p2p: the other rank; one-to-many: root
    std::int32_t group = -1;  ///< one-to-many: index into Program::groups
    std::uint32_t msg_id = 0; ///< p2p: dense id among the messages of the
                              ///< pair (same on both sides)
    std::uint32_t src = 0, nsrc = 0;   ///< source segments
    std::uint32_t dst = 0, ndst = 0;   ///< destination segments
    std::uint64_t bytes = 0;           ///< message bytes (incast: per sender)
    std::uint64_t staging = 0;         ///< offset of its staging bytes
    std::uint32_t ndeps = 0;           ///< ops it waits for
    std::uint32_t next = 0, nnext = 0; ///< ops waiting for it
    std::uint32_t npeers = 0;          ///< one-to-many: members but root
    /// kIncastRecv unstaged: Program::parts[parts + m] is member m's
    /// destination (the root's entry is unused).
    std::uint32_t parts = 0;
};

/// A one-to-many group a program uses: its members (ranks, ascending).
struct ProgramGroup {
    plan::Channel channel = plan::Channel::kShmBcast;
    std::vector<int> members;
};

struct Program {
    int rank = 0;
    std::vector<LOp> ops;
    std::vector<Segment> segs;
    std::vector<std::uint32_t> next;  ///< dependents, sliced by LOp::next
    std::vector<std::uint32_t> roots; ///< ops without deps, in order
    std::vector<std::uint32_t> early; ///< early receives, in order
    std::vector<ProgramGroup> groups;
    std::vector<Segment> parts; ///< gather destinations per member
    /// Per group, its ops in program order (the posting order).
    std::vector<std::vector<std::uint32_t>> group_ops;
    std::uint64_t scratch_bytes = 0;
    std::uint64_t staging_bytes = 0;
    std::uint64_t input_bytes = 0;  ///< extent the program reads
    std::uint64_t output_bytes = 0; ///< extent the program writes
};

/// Lowers `plan.ranks[rank]`, leaving out copies and reductions that move
/// no bytes in this layout (their dependents wait for what they waited
/// for), so a program's ops need not be the plan's one for one. Fails
/// (with a message) where the layout cannot serve the plan: a message
/// whose sides would disagree, a range past a buffer.
Result<Program> lower(const plan::Plan &plan, int rank, const Layout &layout);

} // namespace ucg::exec
