package audit

import (
	"reflect"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
)

// nonZero returns a value of type t that is not its zero value, for the
// kinds a record row's fields have; another kind fails the test, so a new
// field of a new kind is looked at rather than skipped.
func nonZero(t *testing.T, typ reflect.Type) reflect.Value {
	t.Helper()
	switch typ.Kind() {
	case reflect.String:
		return reflect.ValueOf("x").Convert(typ)
	case reflect.Slice:
		s := reflect.MakeSlice(typ, 1, 1)
		s.Index(0).Set(nonZero(t, typ.Elem()))
		return s
	case reflect.Func:
		return reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			return out
		})
	case reflect.Interface:
		return reflect.ValueOf(int64(1))
	case reflect.Int, reflect.Int64, reflect.Int32:
		return reflect.ValueOf(int64(1)).Convert(typ)
	case reflect.Bool:
		return reflect.ValueOf(true).Convert(typ)
	case reflect.Map:
		return reflect.MakeMap(typ)
	case reflect.Pointer:
		return reflect.New(typ.Elem())
	}
	t.Fatalf("no non-zero value for a field of kind %s: extend nonZero", typ.Kind())
	return reflect.Value{}
}

// TestStoreRowLosesNothing: audit.Store copied the trail's
// checkpointer.RecordRow into a store.RecordRow by field names (Table,
// Columns, Values), which silently dropped After and AfterValues and would
// drop any field added later: a record inserted without the lock or row
// it must be made after. Every field of checkpointer.RecordRow, set alone,
// is now either carried to the store row's field of the same name or
// refused with an error naming it; and every field of store.RecordRow is
// carried from the trail's row. Adding a field to either type without
// carrying it fails this test.
func TestStoreRowLosesNothing(t *testing.T) {
	src := reflect.TypeFor[checkpointer.RecordRow]()
	dst := reflect.TypeFor[store.RecordRow]()
	for i := range src.NumField() {
		f := src.Field(i)
		var row checkpointer.RecordRow
		v := nonZero(t, f.Type)
		reflect.ValueOf(&row).Elem().Field(i).Set(v)
		got, err := storeRow(&row)
		if err != nil {
			if !strings.Contains(err.Error(), f.Name) {
				t.Errorf("%s: refused with %q, which does not name it", f.Name, err)
			}
			if _, carried := dst.FieldByName(f.Name); carried {
				t.Errorf("%s: refused, though store.RecordRow has the field", f.Name)
			}
			continue
		}
		df, ok := dst.FieldByName(f.Name)
		if !ok {
			t.Errorf("%s: set, the row accepted, and store.RecordRow has no such field: it was dropped", f.Name)
			continue
		}
		gv := reflect.ValueOf(got).Elem().FieldByIndex(df.Index)
		if !reflect.DeepEqual(gv.Interface(), v.Interface()) {
			t.Errorf("%s: carried as %#v, want %#v", f.Name, gv.Interface(), v.Interface())
		}
	}
	// The other way: a field store.RecordRow gains must come from the
	// trail's row.
	full := checkpointer.RecordRow{Table: `"t"`, Columns: []string{"a"}, Values: []any{int64(1)}}
	got, err := storeRow(&full)
	if err != nil {
		t.Fatal(err)
	}
	gv := reflect.ValueOf(got).Elem()
	for i := range dst.NumField() {
		if gv.Field(i).IsZero() {
			t.Errorf("store.RecordRow.%s is not carried from the trail's row", dst.Field(i).Name)
		}
	}
}
