/** packages/compat's field change kinds, in words. */
export const changeText: Record<string, string> = {
  added: 'added',
  removed: 'removed',
  'event-missing': 'event missing',
  moved: 'moved',
  resized: 'resized',
  'type-changed': 'type changed',
  'became-dynamic': 'became __data_loc',
  'became-static': 'became inline',
  'signedness-changed': 'signedness changed',
};
