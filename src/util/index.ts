/** The shared helpers of every room (files, limits, printable text): small files, one door. */
export { bootId, processAlive, processStartTime } from './process-alive.ts';
export { checkInputPath, decodeTextInput, readTextInput } from './input-file.ts';
export {
  formatCount,
  MAX_COLUMNS,
  MAX_MAPPING_BYTES,
  MAX_MAPPING_FIELDS,
  MAX_NAMES_SHOWN,
  MAX_NESTING_DEPTH,
  MAX_PROBLEMS_SHOWN,
  listSome,
} from './limits.ts';
export { checkNotSpecial, makeFolders } from './make-folders.ts';
export { printable, printableLines } from './printable.ts';
export { seededRandom } from './seeded-random.ts';
export { removeStaleTemps } from './stale-temps.ts';
// What files/ holds now, for the rooms that still import it from here (journal/, workbench/); others import files/.
export { fileNameFor, jsonText, writeFileAtomic } from '../files/index.ts';
export { yamlValue } from './yaml-value.ts';
export { ENTITIES, type Entity } from './entities.ts';
export { closestName, didYouMean, normalizeWord, suggest } from './suggest.ts';
export {
  formatYamlPath,
  parseLocatedYaml,
  unknownTagMessage,
  unknownTags,
  yamlLineOf,
  yamlSchemaError,
  type LocatedYaml,
} from './yaml-location.ts';
export { checkBaseUrl } from './base-url.ts';
export { BUNDLED_MAPPINGS_DIR, bundledValidateDir, defaultStateDir, isBundledFile } from './ready-made-files.ts';
export {
  isV1LiveInput,
  parseV1LiveInput,
  V1_LIVE_PREFIX,
  V1_LIST_OF_RECORD,
  V1_LISTS,
  v1FilterTime,
  type V1List,
  type V1LiveAddress,
} from './v1-input.ts';
export {
  checkRelativeName,
  makePrivateFolder,
  openInside,
  openNoFollow,
  type PathContext,
  pathInside,
} from './safe-path.ts';
export { formatDuration } from './duration.ts';
export { isKnownTimeZone } from './time-zone.ts';
export { lazyModule } from './lazy-module.ts';
export { IdSet, KeySet } from './compact-sets.ts';
