// A YCSB database binding over JDBC: the same code drives DuoDB's duo_sqld, MariaDB and
// Galera through MySQL Connector/J, so the YCSB figures of the three differ only by the
// server. One instance per YCSB client thread (YCSB's contract), so nothing here is shared
// between threads: each instance owns one connection and its prepared statements.
//
// Table (created by duo-bench-suite before the load):
//   usertable (YCSB_KEY VARCHAR(64) PRIMARY KEY, FIELD0 .. FIELD9 VARCHAR(100))
// Properties: db.url, db.user, db.passwd (the names of YCSB's own jdbc-binding). db.url may
// name several servers separated by ';' (DuoDB with two duo_sqld): instance n connects to
// the n-th modulo their number, so the threads spread evenly.
package org.duodb.ycsb;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicInteger;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

public class JdbcDb extends DB {
  private static final String KEY_COLUMN = "YCSB_KEY";
  // Instances created so far in this JVM: which of several servers the next one uses.
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private Connection connection;
  // Statements by SQL text: an operation's SQL depends on which fields it names, and YCSB
  // repeats the same few shapes, so each is prepared once per connection.
  private final Map<String, PreparedStatement> statements = new HashMap<>();

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    String urls = props.getProperty("db.url");
    if (urls == null) {
      throw new DBException("db.url is not set");
    }
    String[] choices = urls.split(";");
    String url = choices[Math.floorMod(INSTANCES.getAndIncrement(), choices.length)];
    try {
      connection = DriverManager.getConnection(url, props.getProperty("db.user", "root"),
          props.getProperty("db.passwd", ""));
      connection.setAutoCommit(true);
    } catch (SQLException e) {
      throw new DBException("cannot connect to " + url + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      for (PreparedStatement statement : statements.values()) {
        statement.close();
      }
      statements.clear();
      if (connection != null) {
        connection.close();
      }
    } catch (SQLException e) {
      throw new DBException("closing the connection: " + e.getMessage(), e);
    }
  }

  private PreparedStatement prepare(String sql) throws SQLException {
    PreparedStatement statement = statements.get(sql);
    if (statement == null) {
      statement = connection.prepareStatement(sql);
      statements.put(sql, statement);
    }
    return statement;
  }

  // "*" or the named fields in a stable order (a stable SQL text per field set).
  private static String columns(Set<String> fields) {
    return fields == null ? "*" : String.join(", ", new TreeSet<>(fields));
  }

  private static void readRow(ResultSet rows, Map<String, ByteIterator> into)
      throws SQLException {
    ResultSetMetaData meta = rows.getMetaData();
    for (int i = 1; i <= meta.getColumnCount(); i++) {
      String name = meta.getColumnLabel(i);
      if (!name.equalsIgnoreCase(KEY_COLUMN)) {
        // YCSB names fields in lower case; some servers return upper-case labels.
        String value = rows.getString(i);
        into.put(name.toLowerCase(), new StringByteIterator(value == null ? "" : value));
      }
    }
  }

  private static Status failed(String what, SQLException e) {
    System.err.println("JdbcDb " + what + ": " + e.getMessage());
    return Status.ERROR;
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
                     Map<String, ByteIterator> result) {
    String sql = "SELECT " + columns(fields) + " FROM " + table + " WHERE " + KEY_COLUMN
        + " = ?";
    try {
      PreparedStatement statement = prepare(sql);
      statement.setString(1, key);
      try (ResultSet rows = statement.executeQuery()) {
        if (!rows.next()) {
          return Status.NOT_FOUND;
        }
        if (result != null) {
          readRow(rows, result);
        }
      }
      return Status.OK;
    } catch (SQLException e) {
      return failed("read", e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    String sql = "SELECT " + columns(fields) + " FROM " + table + " WHERE " + KEY_COLUMN
        + " >= ? ORDER BY " + KEY_COLUMN + " LIMIT ?";
    try {
      PreparedStatement statement = prepare(sql);
      statement.setString(1, startkey);
      statement.setInt(2, recordcount);
      try (ResultSet rows = statement.executeQuery()) {
        while (rows.next()) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          readRow(rows, row);
          if (result != null) {
            result.add(row);
          }
        }
      }
      return Status.OK;
    } catch (SQLException e) {
      return failed("scan", e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    Map<String, ByteIterator> sorted = new TreeMap<>(values);
    List<String> assignments = new ArrayList<>();
    for (String field : sorted.keySet()) {
      assignments.add(field + " = ?");
    }
    String sql = "UPDATE " + table + " SET " + String.join(", ", assignments) + " WHERE "
        + KEY_COLUMN + " = ?";
    try {
      PreparedStatement statement = prepare(sql);
      int index = 1;
      for (ByteIterator value : sorted.values()) {
        statement.setString(index++, value.toString());
      }
      statement.setString(index, key);
      // MySQL counts changed rows by default: an update to the same value is still found.
      statement.executeUpdate();
      return Status.OK;
    } catch (SQLException e) {
      return failed("update", e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    Map<String, ByteIterator> sorted = new TreeMap<>(values);
    List<String> marks = new ArrayList<>();
    marks.add("?");
    for (int i = 0; i < sorted.size(); i++) {
      marks.add("?");
    }
    String sql = "INSERT INTO " + table + " (" + KEY_COLUMN
        + (sorted.isEmpty() ? "" : ", " + String.join(", ", sorted.keySet())) + ") VALUES ("
        + String.join(", ", marks) + ")";
    try {
      PreparedStatement statement = prepare(sql);
      statement.setString(1, key);
      int index = 2;
      for (ByteIterator value : sorted.values()) {
        statement.setString(index++, value.toString());
      }
      statement.executeUpdate();
      return Status.OK;
    } catch (SQLException e) {
      return failed("insert", e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    String sql = "DELETE FROM " + table + " WHERE " + KEY_COLUMN + " = ?";
    try {
      PreparedStatement statement = prepare(sql);
      statement.setString(1, key);
      return statement.executeUpdate() == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (SQLException e) {
      return failed("delete", e);
    }
  }
}
