// Package jsonerr says in the program's own words what is wrong with JSON
// that did not decode, for every input a user or an agent gives as JSON
// (lab arguments, grade reports, trial metadata): no decoder text reaches
// the user.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Problem says in our words what is wrong with data, which did not
// decode as JSON (err is the decoder's error): that it is empty, where its
// syntax breaks (line, column and byte), that it ends early, or which
// field has a value of the wrong kind. The caller names the input.
func Problem(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return "it is empty"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return "the JSON ends before its value is complete"
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Sprintf("not valid JSON at line %d, column %d (byte %d)", line, col, se.Offset)
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, kindName(te.Type), te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("the value must be %s, not a JSON %s", kindName(te.Type), te.Value)
	}
	return err.Error()
}

// position is the line and column (from 1) of byte offset off in data;
// a decoder's offset counts the bytes read, the bad one included.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 1), int64(len(data)))
	before := data[:off-1]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n')
}

// kindName names what a Go type takes in JSON.
func kindName(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return kindName(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}
