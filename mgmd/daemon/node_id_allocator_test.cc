#include "mgmd/daemon/node_id_allocator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

namespace duo::mgm {
namespace {

using Holder = NodeIdAllocator::Holder;

Holder holder(uint64_t owner, std::string address = "127.0.0.1") {
  Holder h;
  h.owner = owner;
  h.peer_address = std::move(address);
  return h;
}

NodeSlot slot(uint32_t id, NodeType type, std::string host = "",
              std::vector<std::string> addresses = {}) {
  return NodeSlot{id, type, std::move(host), std::move(addresses)};
}

// 1 mgmd (49), 2 data nodes (1, 2), API slots 50 (any host), 51 (10.0.0.5 only),
// 52 (any host).
NodeIdAllocator cluster() {
  return NodeIdAllocator({
      slot(52, NodeType::kApi),
      slot(1, NodeType::kData, "127.0.0.1", {"127.0.0.1"}),
      slot(2, NodeType::kData, "127.0.0.1", {"127.0.0.1"}),
      slot(49, NodeType::kManagement, "localhost", {"127.0.0.1", "::1"}),
      slot(50, NodeType::kApi),
      slot(51, NodeType::kApi, "app5", {"10.0.0.5"}),
  });
}

TEST(NodeIdAllocator, AnyIdTakesTheLowestFreeIdOfTheType) {
  NodeIdAllocator a = cluster();
  EXPECT_EQ(*a.allocate(NodeType::kApi, 0, holder(1)), 50u);
  EXPECT_EQ(*a.allocate(NodeType::kApi, 0, holder(2)), 52u);  // 51 is for 10.0.0.5 only
  Result<uint32_t> third = a.allocate(NodeType::kApi, 0, holder(3));
  ASSERT_FALSE(third.ok());
  EXPECT_TRUE(third.status().is(ErrorCode::kTemporary));
  EXPECT_EQ(third.status().message(), "No free node id found for mysqld(API).");
  EXPECT_EQ(*a.allocate(NodeType::kData, 0, holder(4)), 1u);
  EXPECT_EQ(a.allocated_count(), 3u);
}

TEST(NodeIdAllocator, SlotsNamingTheHostArePreferred) {
  NodeIdAllocator a = cluster();
  EXPECT_EQ(*a.allocate(NodeType::kApi, 0, holder(1, "10.0.0.5")), 51u);
  EXPECT_EQ(*a.allocate(NodeType::kApi, 0, holder(2, "10.0.0.5")), 50u);
}

TEST(NodeIdAllocator, RequestedIdErrors) {
  NodeIdAllocator a = cluster();
  Result<uint32_t> missing = a.allocate(NodeType::kApi, 7, holder(1));
  EXPECT_TRUE(missing.status().is(ErrorCode::kNotFound));
  EXPECT_EQ(missing.status().message(), "No node defined with id=7 in config file.");

  Result<uint32_t> wrong_type = a.allocate(NodeType::kApi, 1, holder(1));
  EXPECT_TRUE(wrong_type.status().is(ErrorCode::kInvalidArgument));
  EXPECT_EQ(wrong_type.status().message(),
            "Id 1 configured as ndbd(NDB), connect attempted as mysqld(API).");

  Result<uint32_t> wrong_host = a.allocate(NodeType::kApi, 51, holder(1, "127.0.0.1"));
  EXPECT_TRUE(wrong_host.status().is(ErrorCode::kInvalidArgument));
  EXPECT_NE(wrong_host.status().message().find("wrong host ip 127.0.0.1"), std::string::npos);

  ASSERT_TRUE(a.allocate(NodeType::kApi, 50, holder(1)).ok());
  Result<uint32_t> taken = a.allocate(NodeType::kApi, 50, holder(2));
  EXPECT_TRUE(taken.status().is(ErrorCode::kTemporary));
  EXPECT_EQ(taken.status().message(), "Id 50 already allocated by another node at 127.0.0.1.");
  // The holder asking again is not refused.
  EXPECT_EQ(*a.allocate(NodeType::kApi, 50, holder(1)), 50u);
}

TEST(NodeIdAllocator, UnresolvedHostNameLocksTheSlot) {
  NodeIdAllocator a({slot(3, NodeType::kData, "no.such.host", {})});
  EXPECT_FALSE(a.allocate(NodeType::kData, 0, holder(1)).ok());
  EXPECT_FALSE(a.allocate(NodeType::kData, 3, holder(1)).ok());
}

TEST(NodeIdAllocator, ReleaseOwnerFreesOnlyItsIds) {
  NodeIdAllocator a = cluster();
  ASSERT_TRUE(a.allocate(NodeType::kApi, 0, holder(1)).ok());
  ASSERT_TRUE(a.allocate(NodeType::kData, 2, holder(1)).ok());
  ASSERT_TRUE(a.allocate(NodeType::kApi, 0, holder(2)).ok());
  EXPECT_EQ(a.release_owner(1), (std::vector<uint32_t>{2, 50}));
  EXPECT_EQ(a.release_owner(1), std::vector<uint32_t>{});
  EXPECT_EQ(a.holder(52)->owner, 2u);
  EXPECT_EQ(a.holder(50), nullptr);
  EXPECT_EQ(*a.allocate(NodeType::kApi, 0, holder(3)), 50u);
}

TEST(NodeIdAllocator, HoldBypassesChecksForMgmdItself) {
  NodeIdAllocator a = cluster();
  a.hold(49, holder(NodeIdAllocator::kSelfOwner, "192.168.1.1"));
  Result<uint32_t> taken = a.allocate(NodeType::kManagement, 49, holder(1));
  EXPECT_TRUE(taken.status().is(ErrorCode::kTemporary));
  EXPECT_FALSE(a.allocate(NodeType::kManagement, 0, holder(1)).ok());
}

TEST(NodeIdAllocator, NodeTypeNames) {
  EXPECT_EQ(parse_node_type("NDBD"), NodeType::kData);
  EXPECT_EQ(parse_node_type("0"), NodeType::kData);
  EXPECT_EQ(parse_node_type("mysqld"), NodeType::kApi);
  EXPECT_EQ(parse_node_type("1"), NodeType::kApi);
  EXPECT_EQ(parse_node_type("mgm"), NodeType::kManagement);
  EXPECT_EQ(parse_node_type("2"), NodeType::kManagement);
  EXPECT_FALSE(parse_node_type("3"));
  EXPECT_FALSE(parse_node_type(""));
}

// Random allocate/release against a simple model: no id is ever held twice, ids match
// their type, and "none free" is returned exactly when the model has no free slot.
TEST(NodeIdAllocator, MatchesAModelUnderRandomOperations) {
  std::mt19937_64 random(7);
  std::vector<NodeSlot> slots;
  for (uint32_t id = 1; id <= 12; ++id) {
    slots.push_back(
        slot(id, id <= 4 ? NodeType::kData : (id <= 6 ? NodeType::kManagement : NodeType::kApi)));
  }
  NodeIdAllocator a(slots);
  std::map<uint32_t, uint64_t> model;  // id -> owner
  for (int step = 0; step < 20000; ++step) {
    const uint64_t owner = 1 + random() % 6;
    if (random() % 3 == 0) {
      std::vector<uint32_t> expected;
      for (auto it = model.begin(); it != model.end();) {
        if (it->second == owner) {
          expected.push_back(it->first);
          it = model.erase(it);
        } else {
          ++it;
        }
      }
      ASSERT_EQ(a.release_owner(owner), expected);
      continue;
    }
    const auto type = static_cast<NodeType>(random() % 3);
    const uint32_t requested = random() % 2 == 0 ? 0 : static_cast<uint32_t>(random() % 14);
    Result<uint32_t> got = a.allocate(type, requested, holder(owner));
    if (requested == 0) {
      uint32_t free_id = 0;
      for (const NodeSlot& s : slots) {
        if (s.type == type && model.count(s.node_id) == 0) {
          free_id = s.node_id;
          break;
        }
      }
      ASSERT_EQ(got.ok(), free_id != 0);
      if (got.ok()) {
        ASSERT_EQ(*got, free_id);
        model[free_id] = owner;
      }
    } else {
      const NodeSlot* s = a.find_slot(requested);
      const bool expect_ok = s != nullptr && s->type == type &&
                             (model.count(requested) == 0 || model[requested] == owner);
      ASSERT_EQ(got.ok(), expect_ok) << step;
      if (got.ok()) model[requested] = owner;
    }
    ASSERT_EQ(a.allocated_count(), model.size());
  }
}

}  // namespace
}  // namespace duo::mgm
