/* CRC-64/XZ (Go's crc64.ECMA table), the checksum of mongodump archives. */
#ifndef REMODEL_CRC64_H
#define REMODEL_CRC64_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC over len more bytes. Start with crc = 0; the value
 * returned is the finished CRC of everything so far (like zlib's crc32). */
uint64_t rm_crc64_update (uint64_t crc, const void *buf, size_t len);

/* The 128-bit carry-less multiply version alone (the table version on CPUs
 * without it): what rm_crc64_update does on CPUs without 256-bit
 * VPCLMULQDQ, and an oracle for it. */
uint64_t rm_crc64_update_clmul (uint64_t crc, const void *buf, size_t len);

/* The portable table-driven version, kept as the oracle for faster ones. */
uint64_t rm_crc64_update_table (uint64_t crc, const void *buf, size_t len);

#endif
