// SPDX-License-Identifier: BSD-3-Clause
// The plan as a value: per-rank op lists on channels, addressed in chunks of
// blocks so that one plan serves every message size. Builders, the printer,
// the parser, the validator, the symbolic checker and the cost simulator all
// speak this vocabulary.
#pragma once

#include "ucg/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ucg::plan {

/*
 * Data addressing
 * ---------------
 * Every rank owns three buffers: input, output and scratch. A buffer is an
 * array of blocks; a block is one rank's message (count elements) split into
 * `Plan::nchunks` chunks. A slot is (buffer, block, chunk); a Range is a
 * rectangle of slots: blocks [block, block+nblocks) x chunks
 * [chunk, chunk+nchunks). A message carries the slots of its ranges in order
 * (range by range, block-major inside a range).
 *
 * Blocks per collective (see input_blocks()/output_blocks()):
 *   collective      input blocks          output blocks
 *   bcast           1 at root, else 0     1 on every rank
 *   reduce          1                     1 at root, else 0
 *   allreduce       1                     1
 *   gather          1                     P at root (block b = rank b's)
 *   scatter         P at root, else 0     1 (root's block r on rank r)
 *   allgather       1                     P (block b = rank b's)
 *   alltoall        P (block b for b)     P (block b from b)
 *   reduce_scatter  P (block b for b)     1 (sum of every block r on r)
 *   barrier         1                     1 (holds a token of every rank)
 *   scan            1                     1 (ranks 0..r combined in order)
 *   exscan          1                     1 (ranks 0..r-1 in order; rank
 *                                            0's is undefined, untouched)
 * Scratch holds RankProgram::scratch_blocks blocks with the same chunking.
 *
 * A builder chooses nchunks: pipelined algorithms use the requested segment
 * count; algorithms that split the message P ways (ring, Rabenseifner,
 * scatter-allgather) use P * segments. Chunk sizes come from
 * chunk_begin(): the first (count % nchunks) chunks hold one element more.
 */

enum class Collective : std::uint8_t {
    kBcast,
    kReduce,
    kAllreduce,
    kGather,
    kScatter,
    kAllgather,
    kAlltoall,
    kReduceScatter,
    kBarrier,
    kScan,
    kExscan,
};
inline constexpr int kNumCollectives = 11;

enum class Buffer : std::uint8_t { kInput, kOutput, kScratch };

/*
 * Ops
 * ---
 *   kind               peers            src     dst      meaning
 *   kSend              {to}             yes     -        send src to `to`
 *   kRecv              {from}           -       yes      dst = message
 *   kRecvReduce        {from}           opt     yes      dst = dst (+) message
 *   kCopy              {}               yes     yes      dst = src
 *   kReduce            {}               yes     yes      dst = dst (+) src
 *   kBcastSend         {to...}          yes     -        one message to all
 *   kBcastRecv         {from}           -       yes      dst = message
 *   kIncastSend        {to}             yes     -        add src to a reduce
 *   kIncastRecvReduce  {from...}        opt     yes      dst = dst (+) m_1
 *                                                        (+) ... (+) m_n
 *   kIncastGatherSend  {to}             yes     -        send src to a gather
 *   kIncastRecv        {from...}        -       yes      dst = m_1, ..., m_n
 * A receive that reduces may name its own operand as src (as many slots
 * as dst, the same chunks; not with src_first): then src takes dst's
 * place on the right, dst = src (+) message..., and dst's old value is
 * not read (the rank's input reduced as it arrives, with no copy of the
 * input into dst first).
 * kSend/kRecv/kRecvReduce use channel kP2p; kBcastSend/kBcastRecv use
 * kShmBcast or kMcast; the incast kinds use kShmIncast. With `src_first`
 * (kRecvReduce, kReduce only) the operands swap: dst = src (+) dst. The
 * executor applies (+) in exactly this order, so a plan built for it is
 * correct for a non-commutative operator (algorithms::Algorithm::
 * preserves_order). m_1..m_n are the senders' messages in `peers` order;
 * kIncastRecv's dst lists them back to back (peer after peer, each
 * peer's slots), every sender sending as many slots.
 *
 * Groups: every one-to-many op (bcast, incast) names its group, an index
 * into Plan::groups (sorted member lists); point-to-point and local ops
 * have group -1. Every member takes part in each message of its group
 * (the root sends and all others receive, or all others send and the root
 * receives), and every member lists the group's ops in the same order:
 * the transports match a group's messages by that order alone
 * (docs/decisions/0005). One-to-many peers are listed in ascending rank
 * order, the group's member order.
 *
 * Matching: a message is identified by (sender, receiver, channel, tag) and,
 * among messages with the same key, by their order in the op lists (FIFO):
 * the k-th send of a key matches the k-th receive of that key, whatever
 * order the deps let an executor post them in (the executor gives every
 * message its own wire tag from that count). A kBcastSend makes one
 * message per peer, an incast receive consumes one message per peer.
 * Sender and receiver must agree on the flattened slot chunk indices (so
 * the byte sizes agree for every message size).
 *
 * Dependencies: `deps` lists indices of earlier ops of the same rank; an op
 * may start once they completed. Ops without a path between them may run
 * concurrently, so every pair of ops touching the same slot (one writing)
 * must be ordered by deps. Builders get this for free from RankBuilder.
 */
enum class OpKind : std::uint8_t {
    kSend,
    kRecv,
    kRecvReduce,
    kCopy,
    kReduce,
    kBcastSend,
    kBcastRecv,
    kIncastSend,
    kIncastRecvReduce,
    kIncastGatherSend,
    kIncastRecv,
};

enum class Channel : std::uint8_t { kP2p, kShmBcast, kShmIncast, kMcast };

struct Range {
    Buffer buf = Buffer::kInput;
    int block = 0;   // first block
    int nblocks = 1; // number of blocks
    int chunk = 0;   // first chunk inside each block
    int nchunks = 1; // number of chunks
    friend bool operator==(const Range &, const Range &) = default;
};

struct Op {
    OpKind kind = OpKind::kSend;
    Channel channel = Channel::kP2p;
    std::vector<int> peers; // see the table above
    int tag = 0;            // step; matched together with peer and channel
    std::vector<Range> src; // read (sends, copy, reduce)
    std::vector<Range> dst; // written (receives, copy, reduce)
    std::vector<int> deps;  // earlier ops of the same rank, ascending
    int group = -1;         // one-to-many ops: index into Plan::groups
    bool src_first = false; // kRecvReduce, kReduce: dst = src (+) dst
    friend bool operator==(const Op &, const Op &) = default;
};

struct RankProgram {
    int scratch_blocks = 0;
    std::vector<Op> ops;
    friend bool operator==(const RankProgram &, const RankProgram &) = default;
};

struct Plan {
    Collective collective = Collective::kBcast;
    std::string algorithm; // registry name and parameters, free text
    int nranks = 1;
    int root = 0;
    int nchunks = 1;
    // Member lists (ascending ranks) of the one-to-many groups. A one-rank
    // plan keeps those its rank's ops name, in order of first use.
    std::vector<std::vector<int>> groups;
    std::vector<RankProgram> ranks; // size nranks; empty for unbuilt ranks
    friend bool operator==(const Plan &, const Plan &) = default;
};

/* Where each rank runs, as far as the one-to-many channels care: shared
 * memory (shm_bcast, shm_incast) reaches the ranks of one host, mcast the
 * ranks of one multicast domain (-1: none). Empty vectors: not known, not
 * checked. */
struct Placement {
    std::vector<int> host;         // per rank
    std::vector<int> mcast_domain; // per rank, -1: no multicast
    bool known() const { return !host.empty(); }
};

/* Names used by the text form and in messages. */
std::string_view to_string(Collective c);
std::string_view to_string(OpKind k);
std::string_view to_string(Channel c);
std::string_view to_string(Buffer b);
std::optional<Collective> collective_from_string(std::string_view s);
std::optional<OpKind> op_kind_from_string(std::string_view s);
std::optional<Channel> channel_from_string(std::string_view s);
std::optional<Buffer> buffer_from_string(std::string_view s);

/* Op classification. */
// Inline: the executor asks on every completion.
inline bool is_send(OpKind k)
{
    return k == OpKind::kSend || k == OpKind::kBcastSend ||
           k == OpKind::kIncastSend || k == OpKind::kIncastGatherSend;
}
bool is_recv(OpKind k);        // kRecv, kRecvReduce, kBcastRecv, kIncastRecv*
bool is_reducing(OpKind k);    // kRecvReduce, kReduce, kIncastRecvReduce
bool is_one_to_many(OpKind k); // the bcast and incast kinds
// The one-to-many kinds whose rank is the group message's root: it sends
// to every other member (kBcastSend) or receives from every other member
// (kIncastRecvReduce, kIncastRecv).
bool is_group_root(OpKind k);

/* Whether the collective applies a user operator (reduce, allreduce,
 * reduce_scatter, scan, exscan). */
bool has_operator(Collective c);

/* Blocks per buffer for `rank` (table above). */
int input_blocks(Collective c, int nranks, int root, int rank);
int output_blocks(Collective c, int nranks, int root, int rank);

/* Element offset of chunk `c` of a block of `count` elements. */
inline std::size_t chunk_begin(std::size_t count, int nchunks, int c)
{
    const auto n = static_cast<std::size_t>(nchunks);
    const auto i = static_cast<std::size_t>(c);
    return i * (count / n) + (i < count % n ? i : count % n);
}
inline std::size_t chunk_count(std::size_t count, int nchunks, int c)
{
    return chunk_begin(count, nchunks, c + 1) - chunk_begin(count, nchunks, c);
}

/* Elements carried by a message of `ranges` when a block has `count`. */
std::size_t range_elements(const std::vector<Range> &ranges, int nchunks,
                           std::size_t count);

/* Number of slots (block x chunk) in the ranges (INT32_MAX at most: more
 * never passes validate()). */
int range_slots(const std::vector<Range> &ranges);

/* The plan with only `rank`'s program kept and the groups its ops name
 * (what a one-rank build gives). */
Plan project(const Plan &plan, int rank);

/* Keeps only `rank`'s program and the groups it names, renumbered in
 * order of first use (project() and one-rank builds). */
void keep_rank(Plan &plan, int rank);

/* Whether `rank`'s one-to-many ops stay within their channel's reach:
 * shm groups on one host, mcast groups in one multicast domain. Empty when
 * they do (or nothing is known), else what does not. */
std::string check_placement(const Plan &plan, int rank,
                            const Placement &placement);

/* Text form (text.cpp, README.md): stable, round trip exact. */
std::string print(const Plan &plan);
Result<Plan> parse(std::string_view text);

/* Validator (validate.cpp). Semantics: every op waits for its deps; sends
 * are eager (unbounded buffers), a receive completes once its message(s)
 * were sent; messages match by key in op-list order (above), not by the
 * order deps let them post. Checks shapes, matching, groups (members and
 * order, groups.cpp), dependency order, deadlock freedom, slot races,
 * scratch/output read-before-write and, with a known placement, that shm
 * and mcast groups stay within their reach. Each error names the rank and
 * op index. Empty = valid. Validate all-rank plans: in a one-rank build
 * the other ranks' halves of its messages are missing. */
std::vector<std::string> validate(const Plan &plan,
                                  const Placement &placement = {});

/* What the checkers (validate, check_symbolic, check_synchronous) would
 * hold at once for `plan`, in bytes, estimated from its header and op
 * counts before anything is sized by them; validate() refuses a plan
 * above kMaxCheckBytes by name. */
inline constexpr std::int64_t kMaxCheckBytes = std::int64_t{4} << 30;
std::int64_t check_bytes(const Plan &plan);

/* check_bytes()'s parts for one rank: what the checkers hold for it alone
 * (slot log, dependency closure) and its share of what they hold for all
 * ranks at once; check_bytes() is max(max own, sum of shared). Lets a
 * caller estimate check_bytes() from one-rank builds before the whole
 * plan exists (Selector::check_bytes). */
struct CheckBytes {
    std::int64_t own = 0;
    std::int64_t shared = 0;
};
CheckBytes rank_check_bytes(const Plan &plan, int rank);

/* How the symbolic checker combines contributions. */
enum class Combine : std::uint8_t {
    kCommutative, // multisets: any order of (+) is right
    kOrdered,     // sequences: every output must combine in rank order
};

/* Symbolic checker (symbolic.cpp): runs the plan over multisets (or, with
 * Combine::kOrdered, ordered sequences following each op's operand order)
 * of contributions and checks every output slot holds exactly the
 * expected contributions, each once (ordered: in rank order; barrier:
 * every rank's token, at least once, in any order). Assumes validate()
 * passed. Empty = correct. */
std::vector<std::string> check_symbolic(const Plan &plan,
                                        Combine mode = Combine::kCommutative);

/* Rendezvous support (sync.cpp; docs/decisions/0005 item 5). For each op:
 * 1 if it is a point-to-point receive that transitively depends on a send
 * (any kind) of the same rank. The executor posts these at the
 * collective's start into scratch and applies them once their deps are
 * done; it posts the other receives once their deps are done. */
std::vector<char> early_receives(const RankProgram &program);

/* Runs the plan with synchronous sends: a send completes only once every
 * receive it feeds is posted; early receives (above) are posted at start,
 * other receives and all one-to-many ops once their deps are done, and a
 * rank posts a group's ops in list order. Reports the ops that never
 * complete (deadlock). Assumes validate() passed. Empty = no deadlock. */
std::vector<std::string> check_synchronous(const Plan &plan);

/*
 * RankBuilder / PlanBuilder (builder.cpp): builders emit ops in program
 * order; dependencies are derived from slot hazards (read after write,
 * write after read, write after write) and from FIFO order of messages
 * with the same key. PlanBuilder drops ops of ranks other than `only_rank`
 * (when set), so a one-rank build is the projection of the all-rank build.
 * Its one-to-many emitters register the group (the sorted members) and
 * list peers in ascending order.
 */
class RankBuilder {
  public:
    /* Which slots holding an unchanged copy of the input's same slot may
     * be read from the input instead (see add() and finish()): those of
     * buffers whose blocks of one index have the input's size (kAll: the
     * one-block reductions; kToScratch: scratch only, reduce_scatter,
     * whose output block 0 is the rank's own). */
    enum class Forward : std::uint8_t { kNone, kAll, kToScratch };
    RankBuilder(int nchunks, RankProgram *out, Forward forward = Forward::kNone)
        : nchunks_(nchunks), out_(out), forward_(forward)
    {
    }
    int add(Op op); // fills op.deps, returns the op index
    int ensure_scratch(int nblocks);
    /* Forwarding: drops the copies from the input that nothing
     * reads any more (every read went to the input) and whose output
     * slots were overwritten; the ops that depended on a dropped copy
     * depend on its deps instead. Call once, after the last add(). */
    void finish();

  private:
    struct SlotState {
        int last_write = -1;
        std::vector<int> reads;  // since last_write
        bool from_input = false; // last_write copied the input's slot here
    };
    SlotState &slot(Buffer b, int block, int chunk);
    int last_message(const Op &op, int self);
    bool forwardable(const Op &op) const;
    void forward(std::vector<Range> &ranges);
    int nchunks_;
    RankProgram *out_;
    Forward forward_;
    std::vector<char> read_; // per op: a later op read what it wrote
    std::vector<SlotState> slots_[3];
    // Last message op per (kind, channel, tag, peers), for FIFO order:
    // one-peer ops packed in 64 bits, the others by their full key.
    std::unordered_map<std::uint64_t, int> last_p2p_;
    std::map<std::tuple<int, int, int, std::vector<int>>, int> last_multi_;
};

/* A one-to-many message over a group: the root and the other members. */
struct GroupMsg {
    int root = 0;
    std::vector<int> members; // the others, any order
    int tag = 0;
};

class PlanBuilder {
  public:
    PlanBuilder(Collective c, int nranks, int root, int nchunks,
                std::optional<int> only_rank = std::nullopt);
    PlanBuilder(const PlanBuilder &) = delete;
    PlanBuilder &operator=(const PlanBuilder &) = delete;
    bool active(int rank) const { return !only_ || *only_ == rank; }
    std::optional<int> only_rank() const { return only_; }
    int nranks() const { return plan_.nranks; }
    int nchunks() const { return plan_.nchunks; }
    int root() const { return plan_.root; }
    // Emitters; no-ops for inactive ranks. send/recv/copy return the op
    // index on their rank (-1 if inactive).
    int send(int from, int to, int tag, std::vector<Range> src);
    int recv(int at, int from, int tag, std::vector<Range> dst,
             bool reduce = false, bool src_first = false);
    // Point-to-point transfer: send at `from` plus recv(-reduce) at `to`.
    void xfer(int from, int to, int tag, std::vector<Range> src,
              std::vector<Range> dst, bool reduce = false);
    int copy(int at, std::vector<Range> src, std::vector<Range> dst,
             bool reduce = false, bool src_first = false);
    // One-to-many: the root's src to every member's dst (kShmBcast or
    // kMcast).
    void bcast(const GroupMsg &m, Channel ch, std::vector<Range> src,
               std::vector<Range> dst);
    // Many-to-one over kShmIncast: every member's src reduced into the
    // root's dst.
    void incast(const GroupMsg &m, std::vector<Range> src,
                std::vector<Range> dst);
    // Many-to-one over kShmIncast: member i's src (the slots src(i)
    // returns) lands in the root's dst(i); members in ascending order.
    void gather(const GroupMsg &m,
                const std::function<std::vector<Range>(int)> &src,
                const std::function<std::vector<Range>(int)> &dst);
    void scratch(int rank, int nblocks);
    // Raw op (deps derived as above); returns its index, -1 if inactive.
    int add(int rank, Op op);
    // Adds an ordering edge `on` -> `op` on `rank` (on < op; no-op if
    // inactive or either index is negative).
    void depend(int rank, int op, int on);
    Plan take(std::string algorithm);

  private:
    RankBuilder &rb(int rank);
    int group(int root, const std::vector<int> &members);
    Plan plan_;
    std::optional<int> only_;
    std::vector<RankBuilder> builders_;
    std::map<std::vector<int>, int> group_ids_;
};

/* Range helpers: `nchunks` chunks from `chunk` of blocks
 * [block, block+nblocks). */
inline Range chunks(Buffer b, int block, int chunk, int nchunks = 1,
                    int nblocks = 1)
{
    return Range{b, block, nblocks, chunk, nchunks};
}

} // namespace ucg::plan
