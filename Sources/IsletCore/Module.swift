/// Placeholder so the target builds before its first real source file lands; remove it then.
package enum IsletCoreModule {}
