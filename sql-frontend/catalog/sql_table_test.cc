// Tests of SQL table definitions: CREATE TABLE to SqlTable, the sql_definition round trip,
// the storage mapping and the MySQL errors for bad definitions.
#include "sql-frontend/catalog/sql_table.h"

#include <gtest/gtest.h>

#include "sql-frontend/catalog/sql_exception.h"
#include "sql-frontend/catalog/table_alter.h"
#include "sql-frontend/parser/parser.h"

namespace duo::sql::catalog {
namespace {

SqlTable create(const std::string& sql) {
  ParsedStatement parsed = parse_statement(sql);
  EXPECT_TRUE(parsed.ok()) << sql;
  return table_from_create(parsed.statement->as<CreateTableStatement>(), "db1");
}

uint16_t error_of(const std::string& sql) {
  try {
    create(sql);
  } catch (const SqlException& e) {
    return e.code();
  }
  return 0;
}

TEST(SqlTableTest, CreateTableMapsTypesKeysAndDefaults) {
  SqlTable t = create(
      "CREATE TABLE t (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, name VARCHAR(20) DEFAULT 'x',"
      " price DECIMAL(10,2), d DATE, k INT NOT NULL DEFAULT -5, PRIMARY KEY (id),"
      " UNIQUE KEY uk (name), KEY (k, d)) ENGINE=ndbcluster");
  ASSERT_EQ(t.columns.size(), 5u);
  EXPECT_EQ(t.columns[0].storage.type, storage::ColumnType::kBigInt);
  EXPECT_TRUE(t.columns[0].storage.is_unsigned);
  EXPECT_TRUE(t.columns[0].auto_increment);
  EXPECT_EQ(t.columns[1].storage.type, storage::ColumnType::kVarchar);
  EXPECT_EQ(t.columns[1].storage.length, 80u);
  EXPECT_EQ(t.columns[1].char_length, 20u);
  EXPECT_EQ(t.columns[1].default_value, "x");
  EXPECT_EQ(t.columns[2].storage.precision, 10);
  EXPECT_EQ(t.columns[2].storage.scale, 2);
  EXPECT_EQ(t.columns[4].default_value, "-5");
  ASSERT_EQ(t.indexes.size(), 3u);
  EXPECT_EQ(t.indexes[0].name, "PRIMARY");
  EXPECT_EQ(t.indexes[1].name, "uk");
  EXPECT_EQ(t.indexes[1].kind, SqlIndexKind::kUnique);
  EXPECT_EQ(t.indexes[2].name, "k");
  EXPECT_EQ(t.indexes[2].columns, (std::vector<uint16_t>{4, 3}));

  ::duo::protocol::TableDef def = to_table_def(t);
  EXPECT_EQ(def.schema.name, "db1/def/t");
  EXPECT_EQ(def.schema.primary_key, std::vector<uint16_t>{0});
  ASSERT_EQ(def.schema.ordered_indexes.size(), 3u)
      << "uk, k, then the hidden one on the primary key";
  EXPECT_TRUE(def.schema.ordered_indexes[0].unique);
  EXPECT_EQ(def.schema.ordered_indexes[2].name, kPrimaryOrderedIndex);
  EXPECT_EQ(def.schema.ordered_indexes[2].columns, std::vector<uint16_t>{0});
  EXPECT_FALSE(def.schema.ordered_indexes[2].unique) << "the hash index keeps the key unique";
  EXPECT_EQ(ordered_index_number(def.schema, "k"), 1);
  EXPECT_EQ(ordered_index_number(def.schema, kPrimaryOrderedIndex), 2);
  EXPECT_EQ(ordered_index_number(def.schema, "nope"), -1);
  EXPECT_TRUE(def.schema.validate().ok());
  // The hidden index is not an SQL index: the definition round trip does not grow it.
  Result<SqlTable> back = from_table_def(def);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->indexes.size(), 3u);
  EXPECT_EQ(to_table_def(*back).schema.ordered_indexes.size(), 3u);
}

TEST(SqlTableTest, SqlDefinitionRoundTripsAwkwardNames) {
  SqlTable t = create(
      "CREATE TABLE `a,b` (`we%ird\tname` INT PRIMARY KEY, `c,1` CHAR(3) NULL DEFAULT NULL,"
      " v VARCHAR(5) COLLATE utf8mb4_bin NOT NULL DEFAULT 'a,%b')");
  ::duo::protocol::TableDef def = to_table_def(t);
  Result<SqlTable> back = from_table_def(def);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->db, "db1");
  EXPECT_EQ(back->name, "a,b");
  ASSERT_EQ(back->columns.size(), 3u);
  EXPECT_EQ(back->columns[0].name, "we%ird\tname");
  EXPECT_FALSE(back->columns[0].nullable);
  EXPECT_TRUE(back->columns[1].has_default);
  EXPECT_FALSE(back->columns[1].default_value.has_value());
  EXPECT_EQ(back->columns[2].default_value, "a,%b");
  EXPECT_EQ(back->columns[2].storage.collation, storage::Collation::kBinary);
  EXPECT_EQ(back->columns[1].storage.collation, storage::Collation::kCaseInsensitive);
  EXPECT_EQ(encode_sql_definition(*back), def.sql_definition);
}

TEST(SqlTableTest, PartitionsSetTheFragmentCountAndShowInShowCreateTable) {
  const SqlTable t = create("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY () PARTITIONS 3");
  EXPECT_TRUE(t.partition_by_key);
  EXPECT_EQ(t.partitions, 3u);
  const ::duo::protocol::TableDef def = to_table_def(t);
  EXPECT_EQ(def.fragment_count, 3u);
  Result<SqlTable> back = from_table_def(def);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(back->partition_by_key);
  EXPECT_EQ(back->partitions, 3u);
  EXPECT_EQ(encode_sql_definition(*back), def.sql_definition);
  EXPECT_EQ(show_create_table_text(*back, std::nullopt),
            "CREATE TABLE `t` (\n  `a` int NOT NULL,\n  PRIMARY KEY (`a`)\n) ENGINE=ndbcluster "
            "DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci\n"
            "/*!50100 PARTITION BY KEY ()\nPARTITIONS 3 */");
  // KEY () alone: the cluster's default count, the clause shown without one.
  const SqlTable by_key = create("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY ()");
  EXPECT_EQ(to_table_def(by_key).fragment_count, 0u);
  Result<SqlTable> by_key_back = from_table_def(to_table_def(by_key));
  ASSERT_TRUE(by_key_back.ok());
  EXPECT_TRUE(by_key_back->partition_by_key);
  EXPECT_TRUE(show_create_table_text(*by_key_back, std::nullopt)
                  .ends_with("utf8mb4_0900_ai_ci\n/*!50100 PARTITION BY KEY () */"));
  // Without the clause: no record, nothing shown, the default count.
  const ::duo::protocol::TableDef plain =
      to_table_def(create("CREATE TABLE t (a INT PRIMARY KEY)"));
  EXPECT_EQ(plain.fragment_count, 0u);
  EXPECT_EQ(plain.sql_definition.find("partition"), std::string::npos);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY () PARTITIONS 0"), 1504);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY () PARTITIONS 8161"),
            1499);
  EXPECT_EQ(
      create("CREATE TABLE t (a INT PRIMARY KEY) PARTITION BY KEY () PARTITIONS 8160").partitions,
      8160u);
}

TEST(SqlTableTest, MalformedDefinitionsAreCorruption) {
  for (const char* text :
       {"", "duo-sql-table 2\n", "duo-sql-table 1\ncolumn\tx\n",
        "duo-sql-table 1\ncolumn\ta\tint\tNULL\t-\t0\nindex\tPRIMARY\tPRIMARY\ta\n"
        "partition\tKEY\t\n",
        "duo-sql-table 1\ncolumn\ta\tint\tNULL\t-\t0\nindex\tPRIMARY\tPRIMARY\ta\n"
        "partition\tKEY\t8161\n",
        "duo-sql-table 1\ncolumn\ta\tint\tNULL\t-\t0\nindex\tPRIMARY\tPRIMARY\ta\n"
        "partition\tHASH\t2\n",
        "duo-sql-table 1\ncolumn\ta\tint\tNULL\t-\t0\n",  // no key
        "duo-sql-table 1\ncolumn\ta\tint\tNULL\t-\t0\nindex\tPRIMARY\tPRIMARY\tb\n",
        "duo-sql-table 1\ncolumn\ta%Z\tint\tNULL\t-\t0\n"}) {
    Result<SqlTable> t = decode_sql_definition(text, "d", "t");
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.status().code(), ErrorCode::kCorruption);
  }
}

TEST(SqlTableTest, RefusesBadDefinitionsWithMysqlErrors) {
  EXPECT_EQ(error_of("CREATE TABLE t (a INT)"), 1235);  // no primary key yet
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))"), 1068);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, a INT)"), 1060);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT, PRIMARY KEY (z))"), 1072);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b INT AUTO_INCREMENT)"), 1075);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(20000))"), 1074);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b MEDIUMTEXT, KEY (b))"), 1170);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b JSON, UNIQUE (b))"), 3152);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b INT NOT NULL DEFAULT NULL)"), 1067);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b INT)"), 0);
}

// BLOB/TEXT size classes: TINY* all inline (255 bytes, no parts table), the others a
// 256-byte head and parts of NDB's sizes; JSON a LONGTEXT-sized utf8mb4_bin TEXT.
TEST(SqlTableTest, BlobSizeClassesAndTheirPartsTables) {
  struct Case {
    const char* type;
    storage::ColumnType storage_type;
    uint32_t inline_bytes;
    uint64_t bytes_max;
    uint32_t part_bytes;
  };
  const Case cases[] = {
      {"TINYBLOB", storage::ColumnType::kBlob, 255, 255, 0},
      {"TINYTEXT", storage::ColumnType::kText, 255, 255, 0},
      {"BLOB", storage::ColumnType::kBlob, 256, 65535, 2000},
      {"TEXT", storage::ColumnType::kText, 256, 65535, 2000},
      {"MEDIUMBLOB", storage::ColumnType::kBlob, 256, 16777215, 4000},
      {"MEDIUMTEXT", storage::ColumnType::kText, 256, 16777215, 4000},
      {"LONGBLOB", storage::ColumnType::kBlob, 256, 4294967295, 13948},
      {"LONGTEXT", storage::ColumnType::kText, 256, 4294967295, 13948},
      {"JSON", storage::ColumnType::kText, 256, 4294967295, 13948},
  };
  for (const Case& c : cases) {
    const SqlTable table =
        create(std::string("CREATE TABLE t (a INT PRIMARY KEY, b ") + c.type + ")");
    const SqlColumn& b = table.columns[1];
    EXPECT_EQ(b.storage.type, c.storage_type) << c.type;
    EXPECT_EQ(b.storage.length, c.inline_bytes) << c.type;
    EXPECT_EQ(b.blob_bytes_max, c.bytes_max) << c.type;
    EXPECT_EQ(b.blob_part_bytes, c.part_bytes) << c.type;
    EXPECT_EQ(api::has_blob_parts(b.storage), c.part_bytes > 0) << c.type;
    const std::vector<api::BlobPartsSpec> specs = blob_parts_specs(table);
    ASSERT_EQ(specs.size(), c.part_bytes > 0 ? 1u : 0u) << c.type;
    if (!specs.empty()) {
      EXPECT_EQ(specs[0].column, 1);
      EXPECT_EQ(specs[0].part_bytes, c.part_bytes);
    }
    // The declared type survives the cluster table's definition.
    Result<SqlTable> back = from_table_def(to_table_def(table));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->columns[1].blob_part_bytes, c.part_bytes) << c.type;
  }
  EXPECT_EQ(field_type(create("CREATE TABLE t (a INT PRIMARY KEY, b JSON)").columns[1]),
            protocol::FieldType::kJson);
}

// YEAR is a SMALLINT UNSIGNED holding the year; BIT(M) a BIGINT UNSIGNED holding the
// bits. Both keep MySQL's declared-type text, metadata and DEFAULT forms.
TEST(SqlTableTest, YearAndBitColumns) {
  SqlTable t = create(
      "CREATE TABLE t (id INT PRIMARY KEY, y YEAR, y4 YEAR(4) NOT NULL DEFAULT 99,"
      " yz YEAR DEFAULT 0, ys YEAR DEFAULT '0', b BIT, b12 BIT(12) DEFAULT b'101',"
      " bn BIT(16) DEFAULT 258, bx BIT(8) DEFAULT x'7f')");
  const SqlColumn& y = t.columns[1];
  EXPECT_EQ(y.declared_type, "year");
  EXPECT_TRUE(y.is_year);
  EXPECT_EQ(y.storage.type, storage::ColumnType::kSmallInt);
  EXPECT_TRUE(y.storage.is_unsigned);
  EXPECT_EQ(field_type(y), protocol::FieldType::kYear);
  EXPECT_EQ(display_length(y), 4u);
  const uint16_t year_flags = column_flags(t, 1);
  EXPECT_TRUE(year_flags & protocol::kUnsignedFlag);
  EXPECT_TRUE(year_flags & protocol::kZerofillFlag);
  EXPECT_EQ(t.columns[2].declared_type, "year") << "YEAR(4) is YEAR";
  EXPECT_EQ(t.columns[2].default_value, "1999");
  EXPECT_EQ(t.columns[3].default_value, "0000") << "the number 0 is the zero year";
  EXPECT_EQ(t.columns[4].default_value, "2000") << "the string '0' is 2000";

  const SqlColumn& b = t.columns[5];
  EXPECT_EQ(b.declared_type, "bit(1)");
  EXPECT_EQ(b.bit_width, 1);
  EXPECT_EQ(b.storage.type, storage::ColumnType::kBigInt);
  EXPECT_TRUE(b.storage.is_unsigned);
  EXPECT_EQ(field_type(b), protocol::FieldType::kBit);
  EXPECT_EQ(display_length(t.columns[6]), 12u);
  const uint16_t bit_flags = column_flags(t, 6);
  EXPECT_TRUE(bit_flags & protocol::kUnsignedFlag);
  EXPECT_FALSE(bit_flags & protocol::kNumFlag) << "MySQL does not send BIT as a number";
  EXPECT_EQ(t.columns[6].default_value, std::string("\x00\x05", 2)) << "kept as its bytes";
  EXPECT_EQ(shown_default(t.columns[6]), "b'101'");
  EXPECT_EQ(shown_default(t.columns[7]), "b'100000010'");
  EXPECT_EQ(shown_default(t.columns[8]), "b'1111111'");
  EXPECT_EQ(shown_default(t.columns[1]), std::nullopt);

  // The definition survives the sql_definition round trip (defaults hold raw bytes).
  Result<SqlTable> back = decode_sql_definition(encode_sql_definition(t), "db1", "t");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back.value().columns[1].is_year);
  EXPECT_EQ(back.value().columns[6].bit_width, 12);
  EXPECT_EQ(back.value().columns[6].default_value, std::string("\x00\x05", 2));

  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, y YEAR(2))"), 1818);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, y YEAR DEFAULT 1900)"), 1067);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, y YEAR DEFAULT 'abc')"), 1067);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b BIT(65))"), 1439);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b BIT(64))"), 0);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b BIT(2) DEFAULT 4)"), 1067);
  EXPECT_EQ(error_of("CREATE TABLE t (a INT PRIMARY KEY, b BIT(2) DEFAULT b'11')"), 0);
}

TEST(SqlTableTest, ClusterTableNames) {
  std::string db, table;
  EXPECT_TRUE(split_cluster_table_name("shop/def/orders", &db, &table));
  EXPECT_EQ(db, "shop");
  EXPECT_EQ(table, "orders");
  EXPECT_FALSE(split_cluster_table_name("sys_table", &db, &table));
  EXPECT_FALSE(split_cluster_table_name("/def/x", &db, &table));
  EXPECT_EQ(cluster_table_name("a", "b"), "a/def/b");
}

}  // namespace
}  // namespace duo::sql::catalog
