// Tests of a view's dictionary object: the definition text round trip with its escapes,
// refusal of malformed or foreign definitions, and the "db/view/v" namespace.
#include "sql-frontend/catalog/sql_view.h"

#include <gtest/gtest.h>

namespace duo::sql::catalog {
namespace {

TEST(SqlViewTest, DefinitionRoundTripsWithEscapes) {
  SqlView view;
  view.db = "d";
  view.name = "v";
  view.algorithm = "MERGE";
  view.definer_user = "app\tuser";
  view.definer_host = "%";
  view.security = "INVOKER";
  view.check_option = "LOCAL";
  view.columns = {"a", "b%c"};
  view.query = "select a,\n b from t where c = '100%'";
  view.canonical = "select `t`.`a` AS `a` from `d`.`t`";
  Result<SqlView> back = decode_view_definition(encode_view_definition(view), "d", "v");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->algorithm, "MERGE");
  EXPECT_EQ(back->definer_user, "app\tuser");
  EXPECT_EQ(back->definer_host, "%");
  EXPECT_EQ(back->security, "INVOKER");
  EXPECT_EQ(back->check_option, "LOCAL");
  EXPECT_EQ(back->columns, view.columns);
  EXPECT_EQ(back->query, view.query);
  EXPECT_EQ(back->canonical, view.canonical);
}

TEST(SqlViewTest, RefusesForeignAndUnknownRecords) {
  EXPECT_FALSE(decode_view_definition("duo-sql-table 1\n", "d", "v").ok());
  EXPECT_FALSE(decode_view_definition("duo-sql-view 1\nquery\tselect 1\nfuture\tx\n", "d", "v").ok());
  EXPECT_FALSE(decode_view_definition("duo-sql-view 1\nalgorithm\tMERGE\n", "d", "v").ok());
  EXPECT_FALSE(decode_view_definition("duo-sql-view 1\nquery\tbad %7 escape\n", "d", "v").ok());
}

TEST(SqlViewTest, DictionaryObjectLivesInTheViewNamespace) {
  SqlView view;
  view.db = "shop";
  view.name = "recent";
  view.query = "select 1";
  const ::duo::protocol::TableDef def = to_view_table_def(view);
  EXPECT_EQ(def.schema.name, "shop/view/recent");
  std::string db, name;
  EXPECT_FALSE(split_cluster_view_name("shop/def/recent", &db, &name));
  Result<SqlView> back = view_from_table_def(def);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->db, "shop");
  EXPECT_EQ(back->name, "recent");
  EXPECT_EQ(back->query, "select 1");
}

}  // namespace
}  // namespace duo::sql::catalog
