export {
  databaseSize,
  readMirrorFacts,
  type MirrorFacts,
  type SchemaDriftFacts,
} from '../db/store/facts.js';
