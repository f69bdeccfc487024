/** Transaction ids the gateway hands out start at 1: 0 and -1 mean the charger does not know it. */
export const isPlaceholderId = (id: number) => id <= 0;
