/**
 * JupyterLab plugin: highlight `%%cep` cells (and `.cep` files) with the cep language.
 *
 * JupyterLab picks one language per notebook (the kernel's), so a notebook cell that starts with
 * `%%cep` would be highlighted as Python. Every editor gets a compartment, at the highest
 * precedence, that holds the cep language while the text starts with `%%cep` and nothing otherwise.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';
import { Compartment, EditorState, Extension, Prec, Text } from '@codemirror/state';

import { cepSupport } from './language.js';

/** A cell is a %%cep cell when its first non-blank text is the magic. */
const CELL_MAGIC = /^\s*%%cep(?![A-Za-z_0-9])/;

function isCepCell(doc: Text): boolean {
  return CELL_MAGIC.test(doc.sliceString(0, 100));
}

/**
 * The editor extension: a compartment that follows the first line of the text.
 *
 * @param initialText - the text the editor starts with
 */
export function cellMagicSwitch(initialText: string): Extension {
  const support = cepSupport();
  const compartment = new Compartment();
  const follow = EditorState.transactionExtender.of(tr => {
    if (!tr.docChanged) {
      return null;
    }
    const wanted = isCepCell(tr.newDoc);
    const active = compartment.get(tr.startState) === support;
    return wanted === active ? null : { effects: compartment.reconfigure(wanted ? support : []) };
  });
  const initial = CELL_MAGIC.test(initialText.slice(0, 100)) ? support : [];
  return [Prec.highest(compartment.of(initial)), follow];
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'cep-highlight:plugin',
  description: 'Syntax highlighting for %%cep cells and .cep files.',
  autoStart: true,
  requires: [IEditorExtensionRegistry, IEditorLanguageRegistry],
  activate: (
    _app: JupyterFrontEnd,
    extensions: IEditorExtensionRegistry,
    languages: IEditorLanguageRegistry
  ) => {
    languages.addLanguage({
      name: 'cep',
      displayName: 'CEP',
      mime: 'text/x-cep',
      extensions: ['cep'],
      support: cepSupport()
    });
    extensions.addExtension({
      name: 'cep-highlight:cell-magic',
      factory: options =>
        EditorExtensionRegistry.createImmutableExtension(
          cellMagicSwitch(options.model.sharedModel.getSource())
        )
    });
  }
};

export default plugin;
