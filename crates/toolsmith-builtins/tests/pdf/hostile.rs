//! Hostile PDFs: each one gets a clear error (kind `execution_error`, the reason and what to
//! do), never a panic (`internal`) or a hung call, from both `read_pdf` and `pdf_info`.

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use serde_json::json;
use toolsmith_core::ErrorKind;

use super::EXEC;
use crate::files::Fixture;

/// A one-page PDF with `text` on its page, built with lopdf itself.
fn simple_pdf(text: &str) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let content = Content {
        operations: vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
            Operation::new("Td", vec![72.into(), 700.into()]),
            Operation::new("Tj", vec![Object::string_literal(text)]),
            Operation::new("ET", vec![]),
        ],
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    doc
}

fn save(doc: &mut Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Both reading tools on `name` fail with `execution_error`; `read_pdf`'s message.
async fn both_refuse(fx: &Fixture, name: &str, bytes: &[u8]) -> String {
    std::fs::write(fx.dir("alice").join(name), bytes).unwrap();
    let info = fx.fails("pdf_info", json!({"path": name}), EXEC).await;
    assert!(!info.is_empty());
    fx.fails("read_pdf", json!({"path": name}), EXEC).await
}

#[tokio::test]
async fn a_plain_pdf_made_elsewhere_reads() {
    let fx = Fixture::new();
    let bytes = save(&mut simple_pdf("Made by another program"));
    std::fs::write(fx.dir("alice").join("other.pdf"), bytes).unwrap();
    let read = fx.ok("read_pdf", json!({"path": "other.pdf"})).await;
    assert_eq!(read["text"], "Made by another program");
}

#[tokio::test]
async fn files_that_are_not_pdfs_or_are_broken_get_a_clear_error() {
    let fx = Fixture::new();
    let msg = both_refuse(&fx, "notes.pdf", b"just some text, not a PDF").await;
    assert!(
        msg.contains("not a PDF") && msg.contains("read_file"),
        "{msg}"
    );
    let msg = both_refuse(&fx, "empty.pdf", b"").await;
    assert!(msg.contains("not a PDF"), "{msg}");

    let mut garbage = b"%PDF-1.7\n".to_vec();
    garbage.extend((0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let msg = both_refuse(&fx, "garbage.pdf", &garbage).await;
    assert!(msg.contains("damaged") || msg.contains("no pages"), "{msg}");

    // Cut short at every tenth of its length: a clear answer each time, never a panic.
    let whole = save(&mut simple_pdf("Truncated text"));
    for tenth in 1..10 {
        let cut = &whole[..whole.len() * tenth / 10];
        let name = format!("cut{tenth}.pdf");
        std::fs::write(fx.dir("alice").join(&name), cut).unwrap();
        let res = fx.call("read_pdf", json!({"path": name})).await;
        assert_ne!(
            res.error_kind(),
            Some(ErrorKind::Internal),
            "{:?}",
            res.content
        );
        if res.is_error {
            let msg = res.error_message().unwrap();
            assert!(
                msg.contains("try another copy") || msg.contains("no pages"),
                "{msg}"
            );
        }
    }
}

#[tokio::test]
async fn encrypted_pdfs_need_their_password() {
    use lopdf::{EncryptionState, EncryptionVersion, Permissions};
    let fx = Fixture::new();
    let mut doc = simple_pdf("Top secret text");
    let id = Object::string_literal(b"0123456789abcdef".to_vec());
    doc.trailer.set("ID", vec![id.clone(), id]);
    let version = EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner-pw",
        user_password: "user-pw",
        key_length: 128,
        permissions: Permissions::all(),
    };
    let state = EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    std::fs::write(fx.dir("alice").join("secret.pdf"), save(&mut doc)).unwrap();

    let msg = fx
        .fails("read_pdf", json!({"path": "secret.pdf"}), EXEC)
        .await;
    assert!(
        msg.contains("encrypted") && msg.contains("'password'"),
        "{msg}"
    );
    let msg = fx
        .fails(
            "pdf_info",
            json!({"path": "secret.pdf", "password": "wrong"}),
            EXEC,
        )
        .await;
    assert!(msg.contains("check the password"), "{msg}");
    let read = fx
        .ok(
            "read_pdf",
            json!({"path": "secret.pdf", "password": "user-pw"}),
        )
        .await;
    assert_eq!(read["text"], "Top secret text");
    let info = fx
        .ok(
            "pdf_info",
            json!({"path": "secret.pdf", "password": "user-pw"}),
        )
        .await;
    assert_eq!(info["encrypted"], true);
    assert_eq!(info["pageCount"], 1);
}

#[tokio::test]
async fn a_decompression_bomb_is_refused() {
    let fx = Fixture::new();
    let mut doc = simple_pdf("bomb");
    // A page content stream that inflates to 64 MB of spaces (twice the cap).
    let page_id = doc.page_iter().next().unwrap();
    let mut bomb = Stream::new(dictionary! {}, vec![b' '; 64 * 1024 * 1024]);
    bomb.compress().unwrap();
    assert!(bomb.content.len() < 1024 * 1024, "{}", bomb.content.len());
    let bomb_id = doc.add_object(bomb);
    doc.get_dictionary_mut(page_id)
        .unwrap()
        .set("Contents", bomb_id);
    std::fs::write(fx.dir("alice").join("bomb.pdf"), save(&mut doc)).unwrap();
    let msg = fx
        .fails("read_pdf", json!({"path": "bomb.pdf"}), EXEC)
        .await;
    assert!(msg.contains("decompression bomb"), "{msg}");
}

#[tokio::test]
async fn crafted_structures_do_not_crash_or_hang() {
    let fx = Fixture::new();
    // An array nested 200,000 deep where an object should be.
    let mut deep = b"%PDF-1.7\n1 0 obj\n".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 200_000));
    deep.extend(std::iter::repeat_n(b']', 200_000));
    deep.extend(b"\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
    let msg = both_refuse(&fx, "deep.pdf", &deep).await;
    assert!(msg.contains("try another copy"), "{msg}");

    // A page tree whose Kids point back at itself.
    let mut cyclic = simple_pdf("cycle");
    let pages_id = cyclic
        .catalog()
        .unwrap()
        .get(b"Pages")
        .unwrap()
        .as_reference()
        .unwrap();
    cyclic.get_dictionary_mut(pages_id).unwrap().set(
        "Kids",
        vec![Object::Reference(pages_id), Object::Reference(pages_id)],
    );
    std::fs::write(fx.dir("alice").join("cyclic.pdf"), save(&mut cyclic)).unwrap();
    for tool in ["read_pdf", "pdf_info"] {
        let res = fx.call(tool, json!({"path": "cyclic.pdf"})).await;
        assert_ne!(
            res.error_kind(),
            Some(ErrorKind::Internal),
            "{:?}",
            res.content
        );
        assert_ne!(
            res.error_kind(),
            Some(ErrorKind::Timeout),
            "{:?}",
            res.content
        );
    }
}

#[tokio::test]
async fn files_over_the_size_cap_are_not_read() {
    let fx = Fixture::new();
    let path = fx.dir("alice").join("huge.pdf");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(toolsmith_builtins::pdf::MAX_PDF_BYTES + 1)
        .unwrap();
    let msg = fx
        .fails("read_pdf", json!({"path": "huge.pdf"}), EXEC)
        .await;
    assert!(msg.contains("32 MB"), "{msg}");
}
