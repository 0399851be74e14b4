// Package store keeps a study's durable state in SQLite (modernc.org/sqlite).
//
// # Layout
//
// One database file per campaign, in WAL mode with a busy timeout and foreign
// keys on. Migrations are embedded SQL files applied in order inside one
// transaction each. Every change to the study goes through [Store.Tx], which
// opens an IMMEDIATE transaction, so a crash leaves either all or none of it.
//
// # Event log
//
// The events table is append-only (triggers refuse UPDATE and DELETE) and each
// row carries the hash of the row before it, starting from "GENESIS", so
// [Store.VerifyChain] can tell whether anything was rewritten.
//
// The store knows rows and JSON documents, not the study's rules: those live in
// package engine.
package store
