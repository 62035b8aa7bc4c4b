package duck_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/fediverse-observer/observer/duck"
)

// writeQuery runs q through the Store and returns what it writes as format.
func writeQuery(t *testing.T, s *duck.Store, q, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Reader.WriteQuery(context.Background(), &b, q, format); err != nil {
		t.Fatalf("%s as %s: %v", q, format, err)
	}
	return b.String()
}

// csvValue runs a query of one column and one row and returns its value as
// csv writes it.
func csvValue(t *testing.T, s *duck.Store, q string) string {
	t.Helper()
	out := writeQuery(t, s, q, "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || len(recs[1]) != 1 {
		t.Fatalf("%s: want a header and one value, got %q (%v)", q, out, err)
	}
	return recs[1][0]
}

// TestWriteQueryTypes: each DuckDB type prints by its column's type, as
// DuckDB's CLI prints it in the text formats (timestamps aside: RFC 3339,
// always with their time), and as its natural JSON in json, nested in
// lists, structs and maps too.
func TestWriteQueryTypes(t *testing.T) {
	s := openStore(t, t.TempDir())
	for _, tc := range []struct {
		name, expr string
		text, json string
		// duck: the text is DuckDB's own, CAST(expr AS VARCHAR).
		duck bool
	}{
		// INTERVAL, as in docs/operations.md's ended_at - started_at.
		{"interval micros", "TIMESTAMP '2026-01-05 12:00:00.082787' - TIMESTAMP '2026-01-05 12:00:00'", "00:00:00.082787", `"00:00:00.082787"`, true},
		{"interval all parts", "INTERVAL '1 year 2 months 3 days 4 hours 5 minutes 6.5 seconds'", "1 year 2 months 3 days 04:05:06.5", `"1 year 2 months 3 days 04:05:06.5"`, true},
		{"interval negative", "INTERVAL '-1 year -1 month -1 day'", "-1 year -1 month -1 day", `"-1 year -1 month -1 day"`, true},
		{"interval negative time", "-INTERVAL '90 minutes'", "-01:30:00", `"-01:30:00"`, true},
		{"interval mixed signs", "INTERVAL '1 day -2 hours'", "1 day -02:00:00", `"1 day -02:00:00"`, true},
		{"interval zero", "INTERVAL '0 seconds'", "00:00:00", `"00:00:00"`, true},
		{"interval hours", "INTERVAL '100 hours'", "100:00:00", `"100:00:00"`, true},

		// DECIMAL with its scale; exact JSON numbers.
		{"decimal", "100.0*3", "300.0", "300.0", true},
		{"decimal small negative", "-0.005::DECIMAL(10,3)", "-0.005", "-0.005", true},
		{"decimal zero", "0::DECIMAL(4,2)", "0.00", "0.0", true},
		{"decimal 38 digits", "12345678901234567890.123456789::DECIMAL(38,9)", "12345678901234567890.123456789", "12345678901234567890.123456789", true},

		// DOUBLE and FLOAT as DuckDB writes them; JSON has no NaN.
		{"double integral", "100.0::DOUBLE", "100.0", "100.0", true},
		{"double million", "1e6::DOUBLE", "1000000.0", "1000000.0", true},
		{"double small", "1e-5::DOUBLE", "1e-05", "0.00001", true},
		{"double nan", "'nan'::DOUBLE", "nan", `"nan"`, true},
		{"float -inf", "'-inf'::FLOAT", "-inf", `"-inf"`, true},

		// TIME and TIMETZ.
		{"time", "TIME '12:00:00'", "12:00:00", `"12:00:00"`, true},
		{"time fraction", "TIME '12:34:56.789'", "12:34:56.789", `"12:34:56.789"`, true},
		{"timetz", "TIMETZ '12:00:00+02'", "12:00:00+02", `"12:00:00+02"`, true},
		{"timetz minutes", "TIMETZ '12:00:00-05:30'", "12:00:00-05:30", `"12:00:00-05:30"`, true},

		// UUID.
		{"uuid", "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`, true},
		{"uuid max", "'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff", `"ffffffff-ffff-ffff-ffff-ffffffffffff"`, true},

		// Timestamps keep their time at midnight; DATE is a date.
		{"timestamp midnight", "TIMESTAMP '2026-01-06 00:00:00'", "2026-01-06T00:00:00Z", `"2026-01-06T00:00:00Z"`, false},
		{"timestamptz midnight", "TIMESTAMPTZ '2026-01-06 00:00:00+00'", "2026-01-06T00:00:00Z", `"2026-01-06T00:00:00Z"`, false},
		{"timestamp_s midnight", "TIMESTAMP_S '2026-01-06 00:00:00'", "2026-01-06T00:00:00Z", `"2026-01-06T00:00:00Z"`, false},
		{"timestamp_ns", "TIMESTAMP_NS '2026-01-06 00:00:00.123456789'", "2026-01-06T00:00:00.123456789Z", `"2026-01-06T00:00:00.123456789Z"`, false},
		{"timestamp infinity", "'infinity'::TIMESTAMP", "infinity", `"infinity"`, true},
		{"timestamp_ms -infinity", "'-infinity'::TIMESTAMP_MS", "-infinity", `"-infinity"`, true},
		{"date BC", "DATE '0044-03-15 (BC)'", "0044-03-15 (BC)", `"0044-03-15 (BC)"`, true},
		{"date infinity", "'infinity'::DATE", "infinity", `"infinity"`, true},

		// HUGEINT, UHUGEINT, ENUM and BOOLEAN print as they did.
		{"hugeint", "170141183460469231731687303715884105727::HUGEINT", "170141183460469231731687303715884105727", "170141183460469231731687303715884105727", true},
		{"uhugeint", "340282366920938463463374607431768211455::UHUGEINT", "340282366920938463463374607431768211455", "340282366920938463463374607431768211455", true},
		{"enum", "'happy'::ENUM('sad', 'happy')", "happy", `"happy"`, true},

		// BLOB with DuckDB's escapes.
		{"blob", "unhex('00615C27225B7F80FF0A20')", `\x00a\x5C\x27\x22[\x7F\x80\xFF\x0A `, `"\\x00a\\x5C\\x27\\x22[\\x7F\\x80\\xFF\\x0A "`, true},

		// LIST and ARRAY, with NULL and DuckDB's quoting inside.
		{"list ints", "[1, NULL, 3]", "[1, NULL, 3]", "[1,null,3]", true},
		{"list texts", "['a', NULL, 'b,c', '', 'null', ' x', 'it''s']", `[a, NULL, 'b,c', '', 'null', ' x', 'it\'s']`, `["a",null,"b,c","","null"," x","it's"]`, true},
		{"list dates", "[DATE '2026-01-06', NULL]", "[2026-01-06, NULL]", `["2026-01-06",null]`, true},
		{"list timestamps", "[TIMESTAMP '2026-01-06 00:00:00']", "['2026-01-06T00:00:00Z']", `["2026-01-06T00:00:00Z"]`, false},
		{"list decimals", "[100.0*3, NULL]", "[300.0, NULL]", "[300.0,null]", true},
		{"list intervals", "[INTERVAL '1 second']", "['00:00:01']", `["00:00:01"]`, true},
		{"list times", "[TIME '12:00:00']", "['12:00:00']", `["12:00:00"]`, true},
		{"list uuids", "['6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID]", "[6ba7b810-9dad-11d1-80b4-00c04fd430c8]", `["6ba7b810-9dad-11d1-80b4-00c04fd430c8"]`, true},
		{"list blobs", "[unhex('00'), unhex('2C')]", `[\x00, ',']`, `["\\x00",","]`, true},
		{"list of lists", "[[1, 2], NULL, []]", "[[1, 2], NULL, []]", "[[1,2],null,[]]", true},
		{"list of nulls", "[NULL]", "[NULL]", "[null]", true},
		{"list enums", "['b c'::ENUM('a', 'b c')]", "[b c]", `["b c"]`, true},
		{"array", "[1.5, 2.25]::DECIMAL(4,2)[2]", "[1.50, 2.25]", "[1.5,2.25]", true},

		// STRUCT in the order of its fields.
		{"struct", "{'b': 1, 'a': 'x y', 'c': [INTERVAL '1 second'], 'd': NULL::DATE, 'e': 'a''b'}",
			`{'b': 1, 'a': x y, 'c': ['00:00:01'], 'd': NULL, 'e': 'a\'b'}`, `{"b":1,"a":"x y","c":["00:00:01"],"d":null,"e":"a'b"}`, true},
		{"struct keys", `struct_pack("it's" := 1, "q""k" := 100.0*3)`, `{'it\'s': 1, 'q"k': 300.0}`, `{"it's":1,"q\"k":300.0}`, true},
		{"list of structs", "[{'t': TIME '12:00:00', 'u': '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID}]",
			"[{'t': '12:00:00', 'u': 6ba7b810-9dad-11d1-80b4-00c04fd430c8}]", `[{"t":"12:00:00","u":"6ba7b810-9dad-11d1-80b4-00c04fd430c8"}]`, true},

		// MAP, in DuckDB's order of its entries.
		{"map", "MAP {'a': 1.5, 'b,c': NULL}", "{a=1.5, 'b,c'=NULL}", `{"a":1.5,"b,c":null}`, true},
		{"map numeric keys", "MAP {10: DATE '2026-01-06', 2: NULL}", "{10=2026-01-06, 2=NULL}", `{"10":"2026-01-06","2":null}`, true},
		{"map timestamp keys", "MAP {TIMESTAMP '2026-01-06 00:00:00': [TIMESTAMP '2026-01-07 00:00:00.5']}", "{'2026-01-06T00:00:00Z'=['2026-01-07T00:00:00.5Z']}", `{"2026-01-06T00:00:00Z":["2026-01-07T00:00:00.5Z"]}`, false},
		{"struct of timestamps and doubles", "{'t': TIMESTAMPTZ '2026-01-06 02:00:00+02', 'd': ['nan'::DOUBLE, 1.5]}", "{'t': '2026-01-06T00:00:00Z', 'd': [nan, 1.5]}", `{"t":"2026-01-06T00:00:00Z","d":["nan",1.5]}`, false},

		// UNION as its value; in JSON, as DuckDB's to_json: an object keyed by its tag.
		{"union", "union_value(n := 2.5)::UNION(n DECIMAL(3,1), s VARCHAR)", "2.5", `{"n":2.5}`, true},
		{"list of unions", "[union_value(s := 'a,b')::UNION(n INTEGER, s VARCHAR)]", "[a,b]", `[{"s":"a,b"}]`, true},

		// JSON as JSON.
		{"json", `'{"a":[1,2.5,"x<y"],"b":null}'::JSON`, `{"a":[1,2.5,"x<y"],"b":null}`, `{"a":[1,2.5,"x<y"],"b":null}`, true},
		{"json string", `'"str"'::JSON`, `"str"`, `"str"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := "SELECT " + tc.expr + " AS v"
			if got := csvValue(t, s, q); got != tc.text {
				t.Errorf("text: %s\nwant %s", got, tc.text)
			}
			out := writeQuery(t, s, q, "json")
			if want := "[\n  {\"v\": " + tc.json + "}\n]\n"; out != want {
				t.Errorf("json: %s\nwant %s", out, want)
			}
			if !json.Valid([]byte(out)) {
				t.Errorf("json: not valid JSON: %s", out)
			}
			if tc.duck {
				if got := csvValue(t, s, "SELECT CAST("+tc.expr+" AS VARCHAR) AS v"); got != tc.text {
					t.Errorf("DuckDB prints %s, the case wants %s", got, tc.text)
				}
			}
		})
	}
}

// TestWriteQueryTypesInEveryFormat: the table and markdown formats print
// the same texts, and DuckDB's SUMMARIZE (DECIMAL columns) reads well.
func TestWriteQueryTypesInEveryFormat(t *testing.T) {
	s := openStore(t, t.TempDir())
	q := `SELECT TIMESTAMP '2026-01-06 00:00:00' AS started_at,
		TIMESTAMP '2026-01-06 00:00:01.5' - TIMESTAMP '2026-01-06 00:00:00' AS took,
		100.0*3 AS n, TIME '12:00:00' AS t, '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID AS id, [NULL, 1] AS l`
	want := map[string]string{
		"table": `started_at            took        n      t         id                                    l
--------------------  ----------  -----  --------  ------------------------------------  ---------
2026-01-06T00:00:00Z  00:00:01.5  300.0  12:00:00  6ba7b810-9dad-11d1-80b4-00c04fd430c8  [NULL, 1]
`,
		"markdown": `| started_at | took | n | t | id | l |
| --- | --- | --- | --- | --- | --- |
| 2026-01-06T00:00:00Z | 00:00:01.5 | 300.0 | 12:00:00 | 6ba7b810-9dad-11d1-80b4-00c04fd430c8 | [NULL, 1] |
`,
		"csv": `started_at,took,n,t,id,l
2026-01-06T00:00:00Z,00:00:01.5,300.0,12:00:00,6ba7b810-9dad-11d1-80b4-00c04fd430c8,"[NULL, 1]"
`,
		"json": `[
  {"started_at": "2026-01-06T00:00:00Z", "took": "00:00:01.5", "n": 300.0, "t": "12:00:00", "id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "l": [null,1]}
]
`,
	}
	for format, w := range want {
		if got := writeQuery(t, s, q, format); got != w {
			t.Errorf("%s:\n%s\nwant\n%s", format, got, w)
		}
	}

	out := writeQuery(t, s, "SUMMARIZE SELECT 1.5 AS x UNION ALL SELECT NULL", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("summarize: %q (%v)", out, err)
	}
	for i, c := range recs[0] {
		if c == "null_percentage" && recs[1][i] != "50.00" {
			t.Errorf("summarize: null_percentage %q, want 50.00", recs[1][i])
		}
	}
	if strings.Contains(out, "Width") || strings.Contains(out, "{") {
		t.Errorf("summarize prints Go values:\n%s", out)
	}
}

// TestWriteQueryJSONKeysAreUnique: columns of one name (a join's two date
// columns) are told apart in JSON, where a reader would keep only one of
// two equal keys, without taking a name another column has; the other
// formats keep the names as they are.
func TestWriteQueryJSONKeysAreUnique(t *testing.T) {
	s := openStore(t, t.TempDir())
	q := `SELECT 1 AS date, 2 AS date, 3 AS date_1, 4 AS date`
	var rows []map[string]int
	if err := json.Unmarshal([]byte(writeQuery(t, s, q, "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"date": 1, "date_2": 2, "date_1": 3, "date_3": 4}; len(rows) != 1 || !maps.Equal(rows[0], want) {
		t.Errorf("json: %v, want %v", rows, want)
	}
	if got := writeQuery(t, s, q, "csv"); got != "date,date,date_1,date\n1,2,3,4\n" {
		t.Errorf("csv: %q", got)
	}
}

// TestWriteQueryTypesTheDriverCannotRead: DuckDB writes the values, so a
// type the Go driver cannot hand over (BIT, a MAP keyed by a BLOB) prints
// like any other.
func TestWriteQueryTypesTheDriverCannotRead(t *testing.T) {
	s := openStore(t, t.TempDir())
	for q, want := range map[string]string{
		"SELECT '101'::BIT AS b":                      "101",
		"SELECT MAP {unhex('00'): 1} AS m":            `{\x00=1}`,
		"SELECT 12345678901234567890123::VARINT AS n": "12345678901234567890123",
	} {
		if got := csvValue(t, s, q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}
