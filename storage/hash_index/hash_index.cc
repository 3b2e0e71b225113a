// HashIndex implementation: page management, insert/erase, and one-bucket split/merge.
// The layout and invariants are described in hash_index.h.
#include "storage/hash_index/hash_index.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

namespace duo::storage {
namespace {

// Always-on invariant check: a broken index must stop the node before it corrupts rows.
void check_invariant(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "HashIndex invariant broken: %s\n", what);
    std::abort();
  }
}

Status corruption(const std::string& what) { return Status(ErrorCode::kCorruption, what); }

}  // namespace

HashIndex::HashIndex(GlobalMemory* memory, MemoryArea area) : memory_(memory), area_(area) {
  check_invariant(memory != nullptr, "HashIndex needs a GlobalMemory");
  // Small tables never pay for a directory page: see small_directory_.
  directory_[0] = small_directory_;
  update_thresholds();
}

HashIndex::~HashIndex() {
  while (overflow_pages_ != nullptr) {
    OverflowPage* page = overflow_pages_;
    overflow_pages_ = page->next;
    memory_->free_page(area_, page);
  }
  while (segment_count_ > 0) remove_last_segment();
}

size_t HashIndex::size() const { return size_; }

size_t HashIndex::memory_bytes() const {
  return (static_cast<size_t>(segment_count_) + directory_page_count_ + overflow_page_count_) *
         kPageSize;
}

void HashIndex::update_thresholds() {
  const size_t slots = static_cast<size_t>(primary_bucket_count()) * kSlotsPerBucket;
  split_above_size_ = slots * kSplitFillPercent / 100;
  merge_below_size_ = primary_bucket_count() > 1 ? slots * kMergeFillPercent / 100 : 0;
}

// ---- Pages ------------------------------------------------------------------------------

Status HashIndex::add_segment() {
  const uint32_t segment = segment_count_;
  const uint32_t directory_index = segment / kSegmentsPerDirectoryPage;
  const uint32_t slot = segment % kSegmentsPerDirectoryPage;
  check_invariant(directory_index < kDirectoryPagesMax, "segment beyond the directory");

  // A directory page is needed when a new directory range starts, or when the first range
  // outgrows small_directory_. Allocate it first so a refusal leaves nothing to undo but
  // that page.
  Bucket** new_directory_page = nullptr;
  if ((directory_index > 0 && slot == 0) || (directory_index == 0 && slot == kSmallDirectorySegments)) {
    Result<void*> page = memory_->allocate_page(area_);
    if (!page.ok()) return page.take_status();
    new_directory_page = static_cast<Bucket**>(*page);
  }
  Result<void*> segment_page = memory_->allocate_page(area_);
  if (!segment_page.ok()) {
    if (new_directory_page != nullptr) memory_->free_page(area_, new_directory_page);
    return segment_page.take_status();
  }

  if (new_directory_page != nullptr) {
    if (directory_index == 0) {
      for (uint32_t i = 0; i < kSmallDirectorySegments; ++i) {
        new_directory_page[i] = small_directory_[i];
      }
    }
    directory_[directory_index] = new_directory_page;
    ++directory_page_count_;
  }
  // Buckets are initialised one by one as splits bring them to life; the page is not
  // cleared, so growth touches memory only where entries go.
  directory_[directory_index][slot] = static_cast<Bucket*>(*segment_page);
  ++segment_count_;
  return Status::OK();
}

void HashIndex::remove_last_segment() {
  check_invariant(segment_count_ > 0, "no segment to remove");
  const uint32_t segment = segment_count_ - 1;
  const uint32_t directory_index = segment / kSegmentsPerDirectoryPage;
  const uint32_t slot = segment % kSegmentsPerDirectoryPage;
  memory_->free_page(area_, directory_[directory_index][slot]);
  directory_[directory_index][slot] = nullptr;
  --segment_count_;

  if (directory_index > 0 && slot == 0) {
    memory_->free_page(area_, directory_[directory_index]);
    directory_[directory_index] = nullptr;
    --directory_page_count_;
  } else if (directory_index == 0 && slot == kSmallDirectorySegments) {
    // Back to small: move the first segments home and return the directory page.
    Bucket** page = directory_[0];
    for (uint32_t i = 0; i < kSmallDirectorySegments; ++i) small_directory_[i] = page[i];
    directory_[0] = small_directory_;
    memory_->free_page(area_, page);
    --directory_page_count_;
  }
}

void HashIndex::unlink_overflow_page(OverflowPage* page) {
  if (page->prev != nullptr) {
    page->prev->next = page->next;
  } else {
    overflow_pages_ = page->next;
  }
  if (page->next != nullptr) {
    page->next->prev = page->prev;
  } else {
    overflow_pages_back_ = page->prev;
  }
  page->prev = page->next = nullptr;
}

void HashIndex::push_front_overflow_page(OverflowPage* page) {
  page->prev = nullptr;
  page->next = overflow_pages_;
  if (overflow_pages_ != nullptr) {
    overflow_pages_->prev = page;
  } else {
    overflow_pages_back_ = page;
  }
  overflow_pages_ = page;
}

void HashIndex::push_back_overflow_page(OverflowPage* page) {
  page->next = nullptr;
  page->prev = overflow_pages_back_;
  if (overflow_pages_back_ != nullptr) {
    overflow_pages_back_->next = page;
  } else {
    overflow_pages_ = page;
  }
  overflow_pages_back_ = page;
}

Result<HashIndex::Node*> HashIndex::allocate_node() {
  OverflowPage* page = overflow_pages_;
  // Pages with a free node are kept at the front, so only the first needs looking at.
  if (page == nullptr || page->used_nodes == kNodesPerOverflowPage) {
    Result<void*> raw = memory_->allocate_page(area_);
    if (!raw.ok()) return raw.take_status();
    page = new (*raw) OverflowPage{nullptr, nullptr, nullptr, 0, 0};
    push_front_overflow_page(page);
    ++overflow_page_count_;
    ++empty_overflow_pages_;
  }
  Node* node;
  if (page->free_list != nullptr) {
    node = page->free_list;
    page->free_list = next_of(node->link);
  } else {
    check_invariant(page->untouched_begin < kNodesPerOverflowPage, "overflow page accounting");
    // Node 0 of the page is the header.
    node = reinterpret_cast<Node*>(page) + 1 + page->untouched_begin;
    ++page->untouched_begin;
  }
  if (page->used_nodes == 0) --empty_overflow_pages_;
  ++page->used_nodes;
  if (page->used_nodes == kNodesPerOverflowPage) {
    unlink_overflow_page(page);
    push_back_overflow_page(page);
  }
  ++node_count_;
  return new (node) Node{};
}

void HashIndex::free_node(Node* node) {
  auto* page = static_cast<OverflowPage*>(GlobalMemory::page_of(node));
  check_invariant(page->used_nodes > 0, "freeing a node of an empty overflow page");
  node->link = reinterpret_cast<uintptr_t>(page->free_list);
  page->free_list = node;
  --node_count_;
  if (page->used_nodes == kNodesPerOverflowPage) {
    unlink_overflow_page(page);
    push_front_overflow_page(page);
  }
  --page->used_nodes;
  if (page->used_nodes == 0) {
    // Keep one empty page as a cushion; return any further one to the area.
    if (empty_overflow_pages_ >= 1) {
      unlink_overflow_page(page);
      memory_->free_page(area_, page);
      --overflow_page_count_;
    } else {
      ++empty_overflow_pages_;
    }
  }
}

void HashIndex::free_spares(Node* spares) {
  while (spares != nullptr) {
    Node* spare = spares;
    spares = next_of(spare->link);
    free_node(spare);
  }
}

// ---- Insert / erase ---------------------------------------------------------------------

Status HashIndex::insert(uint32_t hash, uint32_t ref) {
  if (ref == kNoRef) return Status(ErrorCode::kInvalidArgument, "HashIndex: ref is kNoRef");
  if (segment_count_ == 0) {
    DUO_RETURN_IF_ERROR(add_segment());
    new (bucket_at(0)) Bucket{};
  }
  Line tail = line_of(bucket_at(address_of(hash)));
  while (Node* next = tail.next()) tail = line_of(next);
  if (tail.count() == tail.capacity) {
    // Nothing has changed yet, so a refusal leaves the index as it was.
    Result<Node*> node = allocate_node();
    if (!node.ok()) return node.take_status();
    tail.set_next(*node);
    tail = line_of(*node);
  }
  const uint32_t count = tail.count();
  tail.hashes[count] = hash;
  tail.refs[count] = ref;
  tail.set_count(count + 1);
  ++size_;
  maybe_grow();
  return Status::OK();
}

bool HashIndex::erase(uint32_t hash, uint32_t ref) {
  if (size_ == 0) return false;
  Line line = line_of(bucket_at(address_of(hash)));
  Line hole_line{};
  uint32_t hole = kSlotsPerBucket;  // "not found"
  Line before_tail{};
  Node* tail_node = nullptr;  // null while the tail is the primary
  for (;;) {
    if (hole == kSlotsPerBucket) {
      const uint32_t count = line.count();
      for (uint32_t i = 0; i < count; ++i) {
        if (line.hashes[i] == hash && line.refs[i] == ref) {
          hole_line = line;
          hole = i;
          break;
        }
      }
    }
    Node* next = line.next();
    if (next == nullptr) break;
    before_tail = line;
    tail_node = next;
    line = line_of(next);
  }
  if (hole == kSlotsPerBucket) return false;

  // Keep the chain dense: the chain's last entry fills the hole.
  const uint32_t last = line.count() - 1;
  hole_line.hashes[hole] = line.hashes[last];
  hole_line.refs[hole] = line.refs[last];
  line.set_count(last);
  if (last == 0 && tail_node != nullptr) {
    before_tail.set_next(nullptr);
    free_node(tail_node);
  }
  --size_;
  maybe_shrink();
  return true;
}

// ---- Split / merge ----------------------------------------------------------------------

void HashIndex::maybe_grow() {
  if (size_ <= split_above_size_) return;
  if (resize_retry_countdown_ > 0) {
    --resize_retry_countdown_;
    return;
  }
  if (!split_one()) resize_retry_countdown_ = kResizeRetryOperations;
}

void HashIndex::maybe_shrink() {
  if (size_ >= merge_below_size_) return;
  if (resize_retry_countdown_ > 0) {
    --resize_retry_countdown_;
    return;
  }
  if (!merge_one()) resize_retry_countdown_ = kResizeRetryOperations;
}

void HashIndex::append_with_spares(Line* tail, Node** spares, uint32_t hash, uint32_t ref) {
  if (tail->count() == tail->capacity) {
    check_invariant(*spares != nullptr, "split/merge ran out of spare nodes");
    Node* spare = *spares;
    *spares = next_of(spare->link);
    spare->link = 0;
    tail->set_next(spare);
    *tail = line_of(spare);
  }
  const uint32_t count = tail->count();
  tail->hashes[count] = hash;
  tail->refs[count] = ref;
  tail->set_count(count + 1);
}

template <typename Place>
void HashIndex::drain_chain(Bucket* primary, Node** spares, Place&& place) {
  // Copy the primary out first: a split appends into this very bucket while draining it.
  const Bucket source = *primary;
  primary->link = 0;
  for (uint32_t i = 0; i < count_of(source.link); ++i) place(source.hashes[i], source.refs[i]);
  Node* next = next_of(source.link);
  while (next != nullptr) {
    const Node node = *next;  // read it before recycling it
    next->link = reinterpret_cast<uintptr_t>(*spares);
    *spares = next;
    for (uint32_t i = 0; i < count_of(node.link); ++i) place(node.hashes[i], node.refs[i]);
    next = next_of(node.link);
  }
}

// Splits bucket split_ into itself and split_ + 2^level. The old chain's nodes are recycled
// as the entries are redistributed: while node j is being read, j nodes have been released
// and at most 7 + 3j entries placed, which two dense chains (two primaries of 7) hold with
// at most j nodes. So a split allocates no node; only the new segment page (one split in
// 512) can be refused, and then nothing has changed.
bool HashIndex::split_one() {
  const uint32_t buckets = primary_bucket_count();
  if (buckets >= kPrimaryBucketsMax) return false;
  if (buckets % kBucketsPerSegment == 0) {
    Status status = add_segment();
    if (!status.ok()) {
      ++split_failures_;
      return false;
    }
  }
  const uint32_t level_bit = low_mask_ + 1;
  Bucket* keep = bucket_at(split_);
  Bucket* move = new (bucket_at(split_ + level_bit)) Bucket{};
  Line keep_tail = line_of(keep);
  Line move_tail = line_of(move);
  Node* spares = nullptr;
  drain_chain(keep, &spares, [&](uint32_t hash, uint32_t ref) {
    append_with_spares((hash & level_bit) != 0 ? &move_tail : &keep_tail, &spares, hash, ref);
  });
  free_spares(spares);

  ++split_;
  if (split_ == level_bit) {
    low_mask_ = low_mask_ * 2 + 1;
    split_ = 0;
  }
  update_thresholds();
  return true;
}

// Merges the last primary bucket into its buddy, undoing the last split. The moved entries
// are appended to the buddy's chain, recycling the source's nodes as they are read. Before
// the first source node is read, up to 7 entries may need ceil((7 - room) / 3) nodes; from
// then on each node read frees as much as it needs, so that many nodes allocated up front
// always suffice. A refused allocation leaves everything unchanged.
bool HashIndex::merge_one() {
  const uint32_t buckets = primary_bucket_count();
  if (buckets <= 1) return false;
  uint32_t new_low_mask = low_mask_;
  uint32_t new_split = split_;
  if (new_split > 0) {
    --new_split;
  } else {
    new_low_mask >>= 1;
    new_split = new_low_mask;
  }
  const uint32_t last_index = buckets - 1;
  check_invariant(last_index == new_split + new_low_mask + 1, "merge addressing");

  Line buddy_tail = line_of(bucket_at(new_split));
  while (Node* next = buddy_tail.next()) buddy_tail = line_of(next);
  Bucket* last = bucket_at(last_index);
  const uint32_t room = buddy_tail.capacity - buddy_tail.count();
  const uint32_t first_count = count_of(last->link);
  const uint32_t nodes_up_front =
      first_count > room ? (first_count - room + kSlotsPerNode - 1) / kSlotsPerNode : 0;
  Node* spares = nullptr;
  for (uint32_t i = 0; i < nodes_up_front; ++i) {
    Result<Node*> node = allocate_node();
    if (!node.ok()) {
      free_spares(spares);
      ++merge_failures_;
      return false;
    }
    (*node)->link = reinterpret_cast<uintptr_t>(spares);
    spares = *node;
  }
  drain_chain(last, &spares, [&](uint32_t hash, uint32_t ref) {
    append_with_spares(&buddy_tail, &spares, hash, ref);
  });
  free_spares(spares);

  low_mask_ = new_low_mask;
  split_ = new_split;
  if (last_index % kBucketsPerSegment == 0) remove_last_segment();
  update_thresholds();
  return true;
}

// ---- Observability ----------------------------------------------------------------------

HashIndexStats HashIndex::stats() const {
  HashIndexStats stats;
  stats.entries = size_;
  stats.primary_buckets = segment_count_ == 0 ? 0 : primary_bucket_count();
  stats.overflow_nodes = node_count_;
  stats.segment_pages = segment_count_;
  stats.directory_pages = directory_page_count_;
  stats.overflow_pages = overflow_page_count_;
  stats.split_failures = split_failures_;
  stats.merge_failures = merge_failures_;
  for (size_t index = 0; index < stats.primary_buckets; ++index) {
    size_t lines = 1;
    for (const Node* n = next_of(bucket_at(static_cast<uint32_t>(index))->link); n != nullptr;
         n = next_of(n->link)) {
      ++lines;
    }
    if (lines > stats.longest_chain_lines) stats.longest_chain_lines = lines;
  }
  return stats;
}

Status HashIndex::check_consistency() const {
  if (segment_count_ == 0) {
    if (size_ != 0) return corruption("entries without a segment");
    return Status::OK();
  }
  const uint32_t buckets = primary_bucket_count();
  if (split_ > low_mask_) return corruption("split pointer beyond the level");
  if ((low_mask_ & (low_mask_ + 1)) != 0) return corruption("low mask is not 2^level - 1");
  const size_t segments_needed = (buckets + kBucketsPerSegment - 1) / kBucketsPerSegment;
  if (segment_count_ != segments_needed) return corruption("segment count does not match buckets");
  size_t entries = 0;
  size_t nodes = 0;
  for (uint32_t index = 0; index < buckets; ++index) {
    Line line = line_of(bucket_at(index));
    for (bool primary = true;; primary = false) {
      const uint32_t count = line.count();
      if (line.next() != nullptr && count != line.capacity) {
        return corruption("chain not dense at bucket " + std::to_string(index));
      }
      if (!primary && count == 0) return corruption("empty overflow node");
      if (count > line.capacity) return corruption("line count above capacity");
      for (uint32_t i = 0; i < count; ++i) {
        if (line.refs[i] == kNoRef) return corruption("kNoRef stored");
        if (address_of(line.hashes[i]) != index) {
          return corruption("entry in the wrong chain at bucket " + std::to_string(index));
        }
      }
      entries += count;
      Node* next = line.next();
      if (next == nullptr) break;
      ++nodes;
      line = line_of(next);
    }
  }
  if (entries != size_) return corruption("size does not match the entries");
  if (nodes != node_count_) return corruption("overflow node count mismatch");
  size_t pages = 0;
  size_t used = 0;
  size_t empty = 0;
  for (const OverflowPage* p = overflow_pages_; p != nullptr; p = p->next) {
    ++pages;
    used += p->used_nodes;
    if (p->used_nodes == 0) ++empty;
  }
  if (pages != overflow_page_count_) return corruption("overflow page count mismatch");
  if (used != node_count_) return corruption("overflow page usage mismatch");
  if (empty != empty_overflow_pages_ || empty > 1) return corruption("empty overflow pages");
  return Status::OK();
}

}  // namespace duo::storage
