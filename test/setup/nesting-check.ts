// The test workers drive every store path: here a transaction opened inside another throws at
// once (src/db/nesting-check.ts), instead of hanging or committing apart as it would in the
// product, which runs without the check.
import { checkNestedTransactions } from '../../src/db/nesting-check.js';

checkNestedTransactions(true);
