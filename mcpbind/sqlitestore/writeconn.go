// This file defines writeConn, the connection a Store's writes run on,
// and how its statements run: prepared once and run through the driver
// itself.

package sqlitestore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// writeConn is the connection a Store's writes run on, taken from the pool
// for as long as the Store is open, with the statements of the writes
// prepared on it once: preparing (parsing) them costs about as much as
// running them. The transactions are begun and ended with statements, so
// that they use the connection's prepared statements as they are
// (database/sql prepares a statement again in each sql.Tx). The
// statements run on the driver's connection (sql.Conn.Raw), without
// database/sql's conversions and its copy of each row. The holder of the
// Store's writer token uses it.
type writeConn struct {
	conn  *sql.Conn
	stmts map[string]driver.Stmt // by query, prepared on conn's driver connection
	sync  string                 // the synchronous setting it has
	args  []driver.NamedValue    // reused by each statement
}

// openWriter takes the connection of the writes from the pool.
func (s *Store) openWriter(ctx context.Context) (*writeConn, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range versionTriggers {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("creating the version triggers: %w", err)
		}
	}
	// The DSN sets every new connection to syncMode.
	return &writeConn{conn: conn, stmts: make(map[string]driver.Stmt), sync: s.syncMode}, nil
}

// prepared returns the statement of query on dc, the driver connection,
// preparing it the first time.
func (w *writeConn) prepared(dc any, query string) (driver.Stmt, error) {
	if st := w.stmts[query]; st != nil {
		return st, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("the SQLite driver's connection (%T) cannot prepare statements", dc)
	}
	st, err := pc.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// statement returns the prepared statement of query on dc and args as
// its arguments.
func (w *writeConn) statement(dc any, query string, args []any) (driver.Stmt, []driver.NamedValue, error) {
	st, err := w.prepared(dc, query)
	if err != nil {
		return nil, nil, err
	}
	named, err := w.bind(args)
	return st, named, err
}

// bind returns args as the driver's arguments.
func (w *writeConn) bind(args []any) ([]driver.NamedValue, error) {
	w.args = w.args[:0]
	for i, a := range args {
		switch v := a.(type) {
		case uint64:
			if v > 1<<63-1 {
				return nil, fmt.Errorf("argument %d: %d is out of SQLite's range", i+1, v)
			}
			a = int64(v)
		case int:
			a = int64(v)
		case bool:
			a = int64(0)
			if v {
				a = int64(1)
			}
		}
		w.args = append(w.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return w.args, nil
}

// exec runs query with args.
func (w *writeConn) exec(query string, args ...any) error {
	_, err := w.execChanged(query, args...)
	return err
}

// execChanged runs query with args and returns the number of rows it
// changed.
func (w *writeConn) execChanged(query string, args ...any) (changed int64, err error) {
	err = w.conn.Raw(func(dc any) error {
		st, named, err := w.statement(dc, query, args)
		if err != nil {
			return err
		}
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			return fmt.Errorf("the SQLite driver's statement (%T) cannot be executed", st)
		}
		res, err := ex.ExecContext(context.Background(), named)
		if err != nil {
			return err
		}
		changed, err = res.RowsAffected()
		return err
	})
	return changed, err
}

// scan runs query with args and scans its first row into dest; no row
// gives sql.ErrNoRows.
func (w *writeConn) scan(query string, args []any, dest ...any) error {
	found, err := w.returning(query, args, dest...)
	if err == nil && !found {
		err = sql.ErrNoRows
	}
	return err
}

// returning runs query with args and scans its first row, if it returns
// one, into dest. It steps the statement to its end, where SQLite commits
// a write run outside a transaction, so that the error of that commit is
// returned.
func (w *writeConn) returning(query string, args []any, dest ...any) (found bool, err error) {
	err = w.conn.Raw(func(dc any) error {
		st, named, err := w.statement(dc, query, args)
		if err != nil {
			return err
		}
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			return fmt.Errorf("the SQLite driver's statement (%T) cannot be queried", st)
		}
		rows, err := q.QueryContext(context.Background(), named)
		if err != nil {
			return err
		}
		row := make([]driver.Value, len(rows.Columns()))
		for {
			if err = rows.Next(row); err != nil {
				break
			}
			if !found {
				if err = assign(dest, row); err != nil {
					break
				}
				found = true
			}
		}
		if err == io.EOF {
			err = nil
		}
		return errors.Join(err, rows.Close())
	})
	return found, err
}

// assign stores the columns of row into dest, which holds pointers to
// the types the store reads (an integer column into *uint64, *int64 or
// *int; a blob into *[]byte, which the driver copied out of SQLite).
func assign(dest []any, row []driver.Value) error {
	if len(dest) > len(row) {
		return fmt.Errorf("%d columns, want %d", len(row), len(dest))
	}
	for i, d := range dest {
		v := row[i]
		n, isInt := v.(int64)
		switch d := d.(type) {
		case *uint64:
			if !isInt || n < 0 {
				return fmt.Errorf("column %d: %v (%T), want an integer of 0 or more", i+1, v, v)
			}
			*d = uint64(n)
		case *int64:
			if !isInt {
				return fmt.Errorf("column %d: %v (%T), want an integer", i+1, v, v)
			}
			*d = n
		case *int:
			if !isInt {
				return fmt.Errorf("column %d: %v (%T), want an integer", i+1, v, v)
			}
			*d = int(n)
		case *[]byte:
			switch b := v.(type) {
			case []byte:
				*d = b
			case nil:
				*d = nil
			case string:
				*d = []byte(b)
			default:
				return fmt.Errorf("column %d: %v (%T), want a blob", i+1, v, v)
			}
		default:
			return fmt.Errorf("column %d: cannot scan into %T", i+1, d)
		}
	}
	return nil
}

// setSync gives the connection the synchronous setting mode, unless it
// has it. The setting cannot change inside a transaction.
func (w *writeConn) setSync(mode string) error {
	if w.sync == mode {
		return nil
	}
	if err := w.exec("PRAGMA synchronous = " + mode); err != nil {
		return fmt.Errorf("setting synchronous=%s: %w", mode, err)
	}
	w.sync = mode
	return nil
}

// close closes the statements and returns the connection to the pool.
func (w *writeConn) close() error {
	var errs []error
	errs = append(errs, w.conn.Raw(func(any) error {
		for _, st := range w.stmts {
			errs = append(errs, st.Close())
		}
		return nil
	}))
	return errors.Join(append(errs, w.conn.Close())...)
}
