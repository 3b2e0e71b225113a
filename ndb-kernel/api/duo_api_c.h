/* The DuoDB C API: a small, stable C surface over the C++ client library
 * (cluster_connection.h) for language bindings (Python ctypes, Go cgo, ...).
 *
 * Values cross the API as text, as MySQL prints them ("42", "2024-02-29 10:00:00",
 * "12.50"); a NULL value pointer is SQL NULL. Each key operation runs at once (one
 * round trip) inside the open transaction, so its error is known when the call
 * returns; commit or rollback ends the transaction.
 *
 * Errors: functions returning int give 0 on success and -1 on error; functions
 * returning pointers give NULL on error. duo_last_errno() (the MySQL error number,
 * e.g. 1062 for a duplicate key) and duo_last_error() (the message) describe the last
 * error of the calling thread.
 *
 * Thread-safety: a duo_cluster may be shared by threads; a duo_txn belongs to one thread
 * at a time. Free every duo_txn and duo_table before duo_disconnect.
 */
#ifndef DUO_API_C_H
#define DUO_API_C_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct duo_cluster duo_cluster;
typedef struct duo_table duo_table;
typedef struct duo_txn duo_txn;
typedef struct duo_row duo_row;

/* Connects to the cluster whose duo_mgmd `connect_string` names ("host:port") and
 * waits up to timeout_ms for links to the data nodes. */
duo_cluster* duo_connect(const char* connect_string, int timeout_ms);
void duo_disconnect(duo_cluster* cluster);

/* The table definition named `name` (free with duo_table_free). */
duo_table* duo_get_table(duo_cluster* cluster, const char* name);
void duo_table_free(duo_table* table);

duo_txn* duo_begin(duo_cluster* cluster);
/* Inserts / updates a row given as n column names and text values. Update takes the
 * primary key columns among them; the other columns are set. */
int duo_insert(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n);
int duo_update(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n);
/* Deletes the row whose primary key is given. */
int duo_delete(duo_txn* txn, const duo_table* table, const char* const* names,
               const char* const* values, int n);
/* Reads the row whose primary key is given: 0 and *row set (free with duo_row_free),
 * 1 when there is no such row (*row NULL), -1 on error. */
int duo_read(duo_txn* txn, const duo_table* table, const char* const* names,
             const char* const* values, int n, duo_row** row);
int duo_commit(duo_txn* txn);
int duo_rollback(duo_txn* txn);
/* Frees the transaction, rolling it back if it is still open. */
void duo_txn_free(duo_txn* txn);

int duo_row_column_count(const duo_row* row);
const char* duo_row_column_name(const duo_row* row, int i);
/* The value as text, or NULL for SQL NULL. */
const char* duo_row_value(const duo_row* row, int i);
void duo_row_free(duo_row* row);

/* The calling thread's last error: MySQL error number (0 = none) and message. */
int duo_last_errno(void);
const char* duo_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DUO_API_C_H */
