/* Fuzzes the metadata JSON readers: what the core reads from a
 * collection's metadata (indexes, type, collectionName), and the one edit
 * it makes to the text (setting collectionName for long names). */
#include <stdlib.h>

#include "fuzz.h"
#include "remodel/metadata.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    rm_metadata_t m;
    size_t len = 0;
    char *text = malloc (size + 1), *fixed;

    if (!text)
        return 0;
    memcpy (text, data, size);
    text[size] = '\0';
    rm_metadata_read (text, size, &m);
    rm_metadata_clear (&m);
    fixed = rm_metadata_with_name (text, size, "fuzz\"name", &len);
    if (fixed) { /* the edit must give JSON that names the collection */
        rm_metadata_read (fixed, len, &m);
        if (m.parsed && (!m.collection_name || strcmp (m.collection_name, "fuzz\"name") != 0))
            abort ();
        rm_metadata_clear (&m);
        bson_free (fixed);
    }
    free (text);
    return 0;
}
