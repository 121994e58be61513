// This file exposes internals to the tests of package sqlitestore_test.

package sqlitestore

import "database/sql"

// DB returns the store's connection pool, for checks of the connections'
// settings.
func (s *Store) DB() *sql.DB { return s.db }
