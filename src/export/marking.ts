/**
 * An analysis's TLP and PAP as each export format writes them (issue 34): the standard TLP 2.0
 * marking-definition objects of STIX (their fixed ids, OASIS's TLP 2.0 extension), MISP's `tlp:`
 * and `PAP:` taxonomy tags. An export's marking is both levels, or none for an analysis of an older
 * version (`recordedMarking` of src/marking/levels.ts).
 */
import { papLabel, tlpLabel, type Marking, type Tlp } from '../marking/levels.js';

/** OASIS's TLP 2.0 property extension (cti-stix-common-objects). */
export const TLP2_EXTENSION = 'extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d';

/** The fixed ids of the TLP 2.0 marking definitions. */
export const TLP2_MARKING_IDS: Readonly<Record<Tlp, string>> = {
  CLEAR: 'marking-definition--94868c89-83c2-464b-929b-a1a8aa3c8487',
  GREEN: 'marking-definition--bab4a63c-aed9-4cf5-a766-dfca5abac2bb',
  AMBER: 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421',
  'AMBER+STRICT': 'marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003',
  RED: 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1',
};

/** The TLP 2.0 marking-definition object of a level, as OASIS publishes it. */
export function tlpMarkingDefinition(tlp: Tlp): Record<string, unknown> & { type: string; id: string } {
  return {
    type: 'marking-definition',
    spec_version: '2.1',
    id: TLP2_MARKING_IDS[tlp],
    created: '2022-10-01T00:00:00.000Z',
    name: tlpLabel(tlp),
    extensions: { [TLP2_EXTENSION]: { extension_type: 'property-extension', tlp_2_0: tlp.toLowerCase() } },
  };
}

/** MISP's taxonomy tags: `tlp:amber+strict` (lower case, as the tlp taxonomy spells it) and `PAP:RED`. */
export function mispMarkingTags(marking: Marking): { name: string }[] {
  return [{ name: `tlp:${marking.tlp.toLowerCase()}` }, { name: papLabel(marking.pap) }];
}
